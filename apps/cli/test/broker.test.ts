// `flowplane broker`: an owner creates a team's MQTT client from the terminal and a real MQTT
// client (MQTT.js) connects with what the CLI printed; ACL and password changes, deletion, and the
// administrator's broker tokens, whose value is printed once.
import mqtt, { type MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cell, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
let team: { id: string; slug: string };
const opened: MqttClient[] = [];

serveWithAdmin((served) => ({ server, admin } = served), { broker: true });
beforeAll(async () => {
  const created = await admin.flowplane(
    ...["teams", "create", "Sensors", "--slug", "sensors", "--json"],
  );
  team = JSON.parse(created.stdout);
});
afterAll(async () => {
  await Promise.all(opened.map((client) => client.endAsync(true)));
});

/** A CONNECT with what the CLI printed: the MQTT username (also the client id) and the broker. */
function connect(printed: string, password: string): Promise<MqttClient> {
  const username = /^MQTT username\s+(\S+)$/m.exec(printed)![1]!;
  const url = /^Broker\s+(\S+)$/m.exec(printed)![1]!;
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, {
      username,
      clientId: username,
      password,
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 5_000,
    });
    opened.push(client);
    client.once("connect", () => resolve(client));
    client.once("error", (error) => {
      client.end(true);
      reject(error);
    });
  });
}

const closed = (client: MqttClient) =>
  new Promise<void>((resolve) => (client.disconnected ? resolve() : client.once("close", resolve)));

describe("flowplane broker clients", () => {
  it("create takes the password from stdin and prints how to connect; a real client connects with it", async () => {
    const created = await admin.flowplaneWith(
      "first-password\n",
      ...["broker", "clients", "create", "sensor-1", "--team", "sensors"],
      ...["--acl", "both:sensors/#", "--acl", "subscribe:commands/+"],
    );

    expect(created.stderr).toBe("");
    expect(created.status).toBe(0);
    expect(created.stdout).toContain(
      "Created MQTT client sensor-1 (both:sensors/#, subscribe:commands/+).\n",
    );
    expect(created.stdout).toMatch(new RegExp(`^MQTT username\\s+sensor-1@${team.id}$`, "m"));
    expect(created.stdout).toMatch(/^Broker\s+mqtt:\/\/127\.0\.0\.1:\d+$/m);
    expect(created.stdout).not.toContain("first-password");

    const client = await connect(created.stdout, "first-password");
    await client.subscribeAsync("sensors/#", { qos: 1 });
    const received = new Promise<string>((resolve) =>
      client.once("message", (topic, payload) => resolve(`${topic} ${payload.toString()}`)),
    );
    await client.publishAsync("sensors/temp", "21.5", { qos: 1 });
    expect(await received).toBe("sensors/temp 21.5");
  });

  it("list and show print the clients, their ACLs and how to connect; --json the API's", async () => {
    const list = await admin.flowplane("broker", "clients", "list", "--team", "sensors");
    expect(list.status).toBe(0);
    expect(list.stdout.split("\n")[0]).toMatch(/^USERNAME\s+ACLS\s+UPDATED$/);
    expect(cell(list.stdout, 1, "USERNAME")).toBe("sensor-1");
    expect(cell(list.stdout, 1, "ACLS")).toBe("both:sensors/#, subscribe:commands/+");

    const listed = await admin.flowplane("broker", "clients", "list", "--team", team.id, "--json");
    expect(JSON.parse(listed.stdout)).toMatchObject({
      count: 1,
      clients: [{ username: "sensor-1", acls: [{ action: "both", pattern: "sensors/#" }, {}] }],
    });

    const shown = await admin.flowplane(
      ...["broker", "clients", "show", "sensor-1", "--team", "sensors"],
    );
    expect(shown.status).toBe(0);
    expect(shown.stdout).toMatch(/^ACLs\s+both:sensors\/#, subscribe:commands\/\+$/m);
    expect(shown.stdout).toMatch(new RegExp(`^MQTT client id\\s+sensor-1@${team.id}$`, "m"));
  });

  it("a new password ends the live session; the old one is refused, the new one accepted", async () => {
    const before = await admin.flowplane(
      ...["broker", "clients", "show", "sensor-1", "--team", "sensors"],
    );
    const live = await connect(before.stdout, "first-password");

    const updated = await admin.flowplaneWith(
      "second-password\n",
      ...["broker", "clients", "update", "sensor-1", "--password", "--team", "sensors"],
      ...["--acl", "subscribe:sensors/#"],
    );
    expect(updated).toEqual({
      status: 0,
      stdout:
        "Updated MQTT client sensor-1 (subscribe:sensors/#); its live session, if any, was ended.\n",
      stderr: "",
    });
    await closed(live);

    await expect(connect(before.stdout, "first-password")).rejects.toMatchObject({ code: 5 });
    await connect(before.stdout, "second-password");
  });

  it("delete removes the client, named by id or username; it is then not found", async () => {
    const made = await admin.flowplaneWith(
      "doomed-password\n",
      ...["broker", "clients", "create", "doomed", "--acl", "publish:x", "--team", "sensors"],
      "--json",
    );
    expect(made.status, made.stderr).toBe(0);
    const { id } = JSON.parse(made.stdout);
    expect(
      (await admin.flowplane("broker", "clients", "show", id, "--team", "sensors")).stdout,
    ).toMatch(/^Username\s+doomed$/m);

    expect(
      await admin.flowplane("broker", "clients", "delete", "doomed", "--team", "sensors"),
    ).toEqual({ status: 0, stdout: "Deleted MQTT client doomed.\n", stderr: "" });
    const shown = await admin.flowplane("broker", "clients", "show", "doomed", "--team", "sensors");
    expect(shown.status).toBe(1);
    expect(shown.stderr).toMatch(
      /^error: no MQTT client of team \S+ has the id or name "doomed" \(not_found\)\n$/,
    );
  });

  it("refuses a malformed ACL or an update with nothing to change before sending anything (exit 2)", async () => {
    const badAcl = await admin.flowplaneWith(
      "whatever-password\n",
      ...["broker", "clients", "create", "x", "--acl", "read:sensors/#", "--team", "sensors"],
    );
    expect(badAcl.status).toBe(2);
    expect(badAcl.stderr).toContain("Not an ACL: give <action>:<topic filter>");

    const nothing = await admin.flowplane(
      ...["broker", "clients", "update", "sensor-1", "--team", "sensors"],
    );
    expect(nothing.status).toBe(2);
    expect(nothing.stderr).toContain("nothing to change: give --acl and/or --password");
  });

  it("passes on the API's refusals: a duplicate, a bad pattern, a short password", async () => {
    const duplicate = await admin.flowplaneWith(
      "another-password\n",
      ...["broker", "clients", "create", "sensor-1", "--acl", "both:#", "--team", "sensors"],
    );
    expect(duplicate.status).toBe(1);
    expect(duplicate.stderr).toMatch(/\(client_already_exists\)\n$/);

    const pattern = await admin.flowplaneWith(
      "another-password\n",
      ...["broker", "clients", "create", "other", "--acl", "both:a/#/b", "--team", "sensors"],
    );
    expect(pattern.status).toBe(1);
    expect(pattern.stderr).toMatch(/acls\.0\.pattern.*\(invalid_request\)/s);

    const short = await admin.flowplaneWith(
      "short\n",
      ...["broker", "clients", "create", "other", "--acl", "both:#", "--team", "sensors"],
    );
    expect(short.status).toBe(1);
    expect(short.stderr).toMatch(/password.*\(invalid_request\)/s);
  });
});

describe("flowplane broker tokens", () => {
  it("an administrator creates a token (its value printed once), lists and deletes it", async () => {
    const created = await admin.flowplane("broker", "tokens", "create", "emqx");
    expect(created.status).toBe(0);
    const value = /^ {4}(fpb_\S+)$/m.exec(created.stdout)?.[1];
    expect(value).toBeDefined();
    expect(created.stderr).toBe("warning: copy the token now: it will not be shown again\n");
    const id = /\(id ([^)]+)\)/.exec(created.stdout)![1]!;

    const list = await admin.flowplane("broker", "tokens", "list");
    expect(cell(list.stdout, 1, "NAME")).toBe("emqx");
    expect(list.stdout).not.toContain(value);

    // The token answers the broker's authentication call.
    const auth = await fetch(`${server.url}/api/comms/v2/auth`, {
      method: "POST",
      headers: { authorization: `Bearer ${value}`, "content-type": "application/json" },
      body: JSON.stringify({ clientId: "a@b", username: "a@b", password: "nope-nope" }),
    });
    expect(auth.status).toBe(200);
    expect(await auth.json()).toEqual({ result: "deny" });

    expect(await admin.flowplane("broker", "tokens", "delete", id)).toEqual({
      status: 0,
      stdout: `Deleted broker token emqx (id ${id}).\n`,
      stderr: "",
    });
    expect((await admin.flowplane("broker", "tokens", "list")).stdout).not.toContain("emqx");
  });
});

// `flowplane apps` and `flowplane instances` as a user runs them, against the real server running
// real Node-RED processes: create an application and an instance, list it, set a variable and
// restart, read and follow the log, stop, start, suspend, unset, delete.
import { lookup, type LookupAddress, type LookupOptions } from "node:dns";
import { request } from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import { cell, ok, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;

serveWithAdmin((served) => ({ server, admin } = served), { instances: true });
beforeAll(async () => {
  const team = await admin.flowplane("teams", "create", "Plant", "--slug", "plant");
  expect(team.status, team.stderr).toBe(0);
});

/**
 * An HTTP request to an instance's editor host (`<name>.localhost:<port>`), which Node.js's own
 * resolver does not know (browsers and curl take every `*.localhost` to loopback): so does this.
 */
function editor(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; text: string }> {
  const localhost = (
    hostname: string,
    options: LookupOptions,
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ) => {
    if (!hostname.endsWith(".localhost")) return lookup(hostname, options, callback as never);
    if (options.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
    else callback(null, "127.0.0.1", 4);
  };
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      { method: init.method ?? "GET", headers: init.headers, lookup: localhost as never },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
        response.on("error", reject);
      },
    );
    sent.on("error", reject);
    sent.end(init.body);
  });
}

/** What the instance's HTTP endpoint at /env answers, once its flows run. */
async function greeting(url: string) {
  for (let i = 0; i < 150; i++) {
    const response = await editor(`${url}/env`).catch(() => undefined);
    if (response?.status === 200) return response.text;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the flow did not answer");
}

describe("flowplane apps and instances", { timeout: 120_000 }, () => {
  let url: string;

  it("creates an application and an instance that runs, and lists them", async () => {
    expect(await ok(admin, "apps", "create", "Line 1", "--team", "plant")).toMatch(
      /^Created application Line 1 \(id \w+\)\.\n$/,
    );
    const created = await ok(
      admin,
      ...["instances", "create", "line-one", "--app", "Line 1", "--team", "plant", "--wait"],
    );
    expect(created).toMatch(/^Created instance line-one \(id [0-9a-f-]{36}\): running\.\n/);
    url = /^Editor: (\S+)$/m.exec(created)![1]!;
    // The platform's proxy, on a host of the instance's own at the platform's port.
    expect(url).toBe(`http://line-one.localhost:${new URL(server.url).port}`);

    const list = await ok(admin, "instances", "list", "--team", "plant");
    expect(list.split("\n")[0]).toMatch(/^ID\s+NAME\s+APPLICATION\s+STATE\s+URL$/);
    expect(cell(list, 1, "NAME")).toBe("line-one");
    expect(cell(list, 1, "APPLICATION")).toBe("Line 1");
    expect(cell(list, 1, "STATE")).toBe("running");
    expect(cell(list, 1, "URL")).toBe(url);

    const apps = await ok(admin, "apps", "list", "--team", "plant");
    expect(cell(apps, 1, "INSTANCES")).toBe("line-one");
  });

  it("sets a variable that Node-RED sees after a restart, and shows it", async () => {
    // The first administrator's password is expired, and editors let no one in until it is
    // changed (as the first sign-in does).
    const changed = await fetch(`${server.url}/api/v1/user/change_password`, {
      method: "PUT",
      headers: {
        authorization: `Bearer ${server.adminToken}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        old_password: server.adminPassword,
        password: "a fresh long passphrase of its own",
      }),
    });
    expect(changed.status, await changed.text()).toBe(200);
    // The person's own token never reaches the editor; the one `instances editor-token` prints does.
    const asPerson = await editor(`${url}/flows`, {
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    expect(asPerson.status).toBe(401);
    const token = (await ok(admin, "instances", "editor-token", "line-one")).trim();
    // A flow to read it, deployed through the editor's admin API with that token.
    const deployed = await editor(`${url}/flows`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify([
        { id: "t", type: "tab", label: "Flow 1" },
        { id: "i", type: "http in", z: "t", url: "/env", method: "get", wires: [["f"]] },
        {
          id: "f",
          type: "function",
          z: "t",
          func: 'msg.payload = env.get("GREETING") || "none"; return msg;',
          outputs: 1,
          wires: [["o"]],
        },
        { id: "o", type: "http response", z: "t", wires: [] },
      ]),
    });
    expect(deployed.status).toBe(204);

    expect(await ok(admin, "instances", "env", "set", "line-one", "GREETING=hello")).toBe(
      "Set GREETING on line-one; restart it for Node-RED to see them.\n",
    );
    expect(
      (
        await admin.flowplaneWith(
          "s3cret\n",
          ...["instances", "env", "set", "line-one", "TOKEN", "--hidden"],
        )
      ).status,
    ).toBe(0);
    expect(await ok(admin, "instances", "restart", "line-one")).toBe("line-one restarted.\n");
    expect(await greeting(url)).toBe("hello");

    const shown = await ok(admin, "instances", "show", "line-one");
    expect(shown).toMatch(/^State\s+running$/m);
    expect(shown).toMatch(/^Variables\s+GREETING=hello, TOKEN \(hidden\)$/m);
    expect(shown).not.toContain("s3cret");
    const env = await ok(admin, "instances", "env", "list", "line-one");
    expect(env).toMatch(/^TOKEN\s+\(hidden\)$/m);
    expect(env).toMatch(/^FF_INSTANCE_NAME\s+line-one$/m);
  });

  it("prints and follows the log", async () => {
    const log = await ok(admin, "instances", "logs", "line-one", "--limit", "1000");
    expect(log).toMatch(/info\s+Server now running/);
    const followed = await admin.flowplane(
      ...["instances", "logs", "line-one", "--limit", "1", "--follow"],
      ...["--max-polls", "1", "--poll-interval", "50"],
    );
    expect(followed.status).toBe(0);
    expect(followed.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("stops, starts and suspends, and refuses what makes no sense (exit 1 with the API's code)", async () => {
    expect(await ok(admin, "instances", "stop", "line-one")).toBe("line-one is stopped.\n");
    expect(await ok(admin, "instances", "start", "line-one")).toBe("line-one is running.\n");
    expect(await ok(admin, "instances", "suspend", "line-one")).toBe("line-one is suspended.\n");
    const refused = await admin.flowplane("instances", "stop", "line-one");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/\(project_suspended\)\n$/);
    expect(await ok(admin, "instances", "start", "line-one")).toBe("line-one is running.\n");
  });

  it("unsets variables, deletes the instance and then the application", async () => {
    expect(await ok(admin, "instances", "env", "unset", "line-one", "GREETING", "TOKEN")).toBe(
      "Removed GREETING, TOKEN from line-one; restart it for Node-RED to see it.\n",
    );
    const missing = await admin.flowplane("instances", "env", "unset", "line-one", "NOPE");
    expect(missing.status).toBe(1);
    const busy = await admin.flowplane("apps", "delete", "Line 1", "--team", "plant");
    expect(busy.status).toBe(1);
    expect(busy.stderr).toMatch(/\(invalid_application\)\n$/);

    expect(await ok(admin, "instances", "delete", "line-one", "--yes")).toBe(
      "Deleted instance line-one.\n",
    );
    // Nothing of Node-RED answers at its editor's host: only the platform's proxy (503 while it
    // still knows the name, then 404).
    expect([404, 503]).toContain((await editor(`${url}/settings`)).status);
    expect(await ok(admin, "apps", "delete", "Line 1", "--team", "plant")).toMatch(
      /^Deleted application Line 1 \(id \w+\)\.\n$/,
    );
    const gone = await admin.flowplane("instances", "show", "line-one");
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(/\(not_found\)\n$/);
  });
});

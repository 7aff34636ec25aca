// Team broker clients, through the REST API and then through a real MQTT client (MQTT.js) at the
// embedded broker: credentials, ACLs, team isolation (retained messages included), and sessions
// ended when a client is deleted or its password changes.
import { Role } from "@flowplane/contract";
import { auditEntries } from "@flowplane/db";
import type { MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import {
  closeAll,
  type ConnectOptions,
  connectMqtt,
  granted,
  inbox,
  refusalOf,
} from "../support/mqtt-client";

let server: TestServer;
let brokerUrl: string;

beforeAll(async () => {
  server = await startServer({ broker: "embedded" });
  const settings = await server.request("GET", "/api/v1/settings");
  brokerUrl = settings.body["team:broker:url"];
});
afterAll(async () => {
  await closeAll();
  await server.close();
});

let counter = 0;
const PASSWORD = "s3nsor-secret-pass";

async function team(options: { type?: string } = {}) {
  const owner = await server.user();
  const created = await server.request("POST", "/api/v1/teams", {
    token: owner.token,
    body: { name: `Broker team ${++counter}`, ...(options.type && { type: options.type }) },
  });
  expect(created.status, created.text).toBe(200);
  return { id: created.body.id as string, owner };
}

const clientsPath = (teamId: string) => `/api/v1/teams/${teamId}/broker/clients`;
const clientPath = (teamId: string, username?: string) =>
  `/api/v1/teams/${teamId}/broker/client${username ? `/${username}` : ""}`;

async function createClient(
  teamId: string,
  username: string,
  acls: { action: string; pattern: string }[],
  token?: string,
) {
  const reply = await server.request("POST", clientPath(teamId), {
    token,
    body: { username, password: PASSWORD, acls },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

function connect(username: string, options: Partial<ConnectOptions> = {}): Promise<MqttClient> {
  return connectMqtt(username, { url: brokerUrl, password: PASSWORD, ...options });
}

const refusal = (username: string, options: Partial<ConnectOptions> = {}) =>
  refusalOf(username, { url: brokerUrl, password: PASSWORD, ...options });

const closed = (client: MqttClient) =>
  new Promise<void>((resolve) => {
    if (client.disconnected || !client.connected) return resolve();
    client.once("close", () => resolve());
  });

describe("the REST API", () => {
  test("creates, reads, lists, changes and deletes a client; never shows a password", async () => {
    const { id } = await team();
    const acls = [
      { action: "publish", pattern: "sensors/#" },
      { action: "subscribe", pattern: "commands/#" },
    ];
    const created = await createClient(id, "sensor", acls);
    expect(Object.keys(created).sort()).toEqual(
      ["acls", "createdAt", "id", "owner", "updatedAt", "username"].sort(),
    );
    expect(created).toMatchObject({ username: "sensor", acls, owner: null });

    const got = await server.request("GET", clientPath(id, "sensor"));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);
    const list = await server.request("GET", clientsPath(id));
    expect(list.body).toMatchObject({ count: 1, clients: [created] });
    for (const text of [got.text, list.text]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain("scrypt");
    }

    const changed = await server.request("PUT", clientPath(id, "sensor"), {
      body: { acls: [{ action: "both", pattern: "#" }] },
    });
    expect(changed.status, changed.text).toBe(201);
    expect(changed.body.acls).toEqual([{ action: "both", pattern: "#" }]);

    const deleted = await server.request("DELETE", clientPath(id, "sensor"));
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ status: "okay" });
    expect((await server.request("GET", clientPath(id, "sensor"))).status).toBe(404);
    expect((await server.request("DELETE", clientPath(id, "sensor"))).status).toBe(404);

    const events = (await auditEntries(server.db))
      .filter((e) => e.team_id === id)
      .map((e) => e.event);
    expect(events).toEqual(
      expect.arrayContaining([
        "team.broker.client.created",
        "team.broker.client.updated",
        "team.broker.client.deleted",
      ]),
    );
    const bodies = JSON.stringify((await auditEntries(server.db)).map((e) => e.body));
    expect(bodies).not.toContain(PASSWORD);
    expect(bodies).not.toContain("scrypt");
  });

  test("a duplicate is 409 client_already_exists; the same name in another team is fine", async () => {
    const a = await team();
    const b = await team();
    const acls = [{ action: "both", pattern: "#" }];
    await createClient(a.id, "dup", acls);
    const again = await server.request("POST", clientPath(a.id), {
      body: { username: "dup", password: PASSWORD, acls },
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("client_already_exists");
    await createClient(b.id, "dup", acls);
  });

  test("usernames, passwords and patterns are validated, naming the field", async () => {
    const { id } = await team();
    const cases: [unknown, string][] = [
      [
        { username: "a@b", password: PASSWORD, acls: [{ action: "both", pattern: "#" }] },
        "username",
      ],
      [
        { username: "x:y", password: PASSWORD, acls: [{ action: "both", pattern: "#" }] },
        "username",
      ],
      [{ username: "ok", password: "short", acls: [{ action: "both", pattern: "#" }] }, "password"],
      [{ username: "ok", password: PASSWORD, acls: [] }, "acls"],
      [
        { username: "ok", password: PASSWORD, acls: [{ action: "read", pattern: "#" }] },
        "acls.0.action",
      ],
      [
        { username: "ok", password: PASSWORD, acls: [{ action: "both", pattern: "a/#/b" }] },
        "acls.0.pattern",
      ],
      [
        { username: "ok", password: PASSWORD, acls: [{ action: "both", pattern: "a+" }] },
        "acls.0.pattern",
      ],
      [
        { username: "ok", password: PASSWORD, acls: [{ action: "both", pattern: "$SYS/#" }] },
        "acls.0.pattern",
      ],
      [
        { username: "ok", password: PASSWORD, acls: [{ action: "both", pattern: "" }] },
        "acls.0.pattern",
      ],
      [{ username: "ok", password: PASSWORD }, "acls"],
    ];
    for (const [body, field] of cases) {
      const reply = await server.request("POST", clientPath(id), { body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.code).toBe("invalid_request");
      expect(reply.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
    expect((await server.request("GET", clientsPath(id))).body.count).toBe(0);
  });

  test("the team type's client limit is 400 broker_client_limit_reached", async () => {
    const type = await server.request("POST", "/api/v1/team-types", {
      body: {
        name: `Two clients ${++counter}`,
        properties: { teamBroker: { clients: { limit: 2 } } },
      },
    });
    expect(type.status, type.text).toBe(200);
    const { id } = await team({ type: type.body.id });
    const acls = [{ action: "both", pattern: "#" }];
    await createClient(id, "one", acls);
    await createClient(id, "two", acls);
    const third = await server.request("POST", clientPath(id), {
      body: { username: "three", password: PASSWORD, acls },
    });
    expect(third.status).toBe(400);
    expect(third.body.code).toBe("broker_client_limit_reached");
  });

  test("owners write; members and viewers read; other teams' owners get 404", async () => {
    const { id } = await team();
    await createClient(id, "shared", [{ action: "both", pattern: "#" }]);
    const member = await server.user({ teams: [{ id, role: Role.member }] });
    const viewer = await server.user({ teams: [{ id, role: Role.viewer }] });
    const stranger = (await team()).owner;
    const body = { username: "new", password: PASSWORD, acls: [{ action: "both", pattern: "#" }] };
    for (const reader of [member, viewer]) {
      expect((await server.request("GET", clientsPath(id), { token: reader.token })).status).toBe(
        200,
      );
      expect(
        (await server.request("GET", clientPath(id, "shared"), { token: reader.token })).status,
      ).toBe(200);
      expect(
        (await server.request("POST", clientPath(id), { token: reader.token, body })).status,
      ).toBe(403);
      const put = { token: reader.token, body: { acls: body.acls } };
      expect((await server.request("PUT", clientPath(id, "shared"), put)).status).toBe(403);
      const del = { token: reader.token };
      expect((await server.request("DELETE", clientPath(id, "shared"), del)).status).toBe(403);
    }
    expect((await server.request("GET", clientsPath(id), { token: stranger.token })).status).toBe(
      404,
    );
  });

  test("lists page by username and filter by a part of it", async () => {
    const { id } = await team();
    for (const name of ["c", "a", "b", "ab"])
      await createClient(id, name, [{ action: "both", pattern: "#" }]);
    const first = await server.request("GET", `${clientsPath(id)}?limit=2`);
    expect(first.body.clients.map((c: { username: string }) => c.username)).toEqual(["a", "ab"]);
    const next = await server.request(
      "GET",
      `${clientsPath(id)}?limit=2&cursor=${first.body.meta.next_cursor}`,
    );
    expect(next.body.clients.map((c: { username: string }) => c.username)).toEqual(["b", "c"]);
    const found = await server.request("GET", `${clientsPath(id)}?query=B`);
    expect(found.body.clients.map((c: { username: string }) => c.username)).toEqual(["ab", "b"]);
  });

  test("GET /settings tells clients where the broker is", async () => {
    const settings = await server.request("GET", "/api/v1/settings");
    expect(settings.body["team:broker:host"]).toBe("127.0.0.1");
    expect(settings.body["team:broker:url"]).toBe(`mqtt://127.0.0.1:${server.app.mqttPort}`);
  });
});

describe("the embedded broker, with a real MQTT client", () => {
  let teamA: string;
  let teamB: string;

  beforeAll(async () => {
    teamA = (await team()).id;
    teamB = (await team()).id;
    await createClient(teamA, "sensor", [
      { action: "publish", pattern: "sensors/#" },
      { action: "subscribe", pattern: "commands/#" },
    ]);
    await createClient(teamA, "observer", [{ action: "both", pattern: "#" }]);
    await createClient(teamB, "intruder", [{ action: "both", pattern: "#" }]);
  });

  test("right credentials connect; a wrong password, client id, team or name is refused", async () => {
    const client = await connect(`sensor@${teamA}`);
    expect(client.connected).toBe(true);
    await client.endAsync();
    expect(await refusal(`sensor@${teamA}`, { password: "wrong-password" })).toBe(5);
    expect(await refusal(`sensor@${teamA}`, { clientId: "someone-else" })).toBe(5);
    expect(await refusal(`sensor@${teamB}`)).toBe(5);
    expect(await refusal("sensor", { clientId: "sensor" })).toBe(5);
    expect(await refusal(`nobody@${teamA}`)).toBe(5);
    expect(await refusal(`sensor@${teamA}`, { password: "" })).toBe(5);
  });

  test("a subscription outside the ACL is granted 128; one inside is granted", async () => {
    const sensor = await connect(`sensor@${teamA}`);
    expect(await granted(sensor, ["commands/#", "sensors/#"])).toEqual([1, 128]);
    expect(await granted(sensor, ["$SYS/#"])).toEqual([128]);
    const observer = await connect(`observer@${teamA}`);
    expect(await granted(observer, ["#"])).toEqual([1]);
    await Promise.all([sensor.endAsync(), observer.endAsync()]);
  });

  test("an allowed publish arrives with its bare topic; a forbidden one is dropped", async () => {
    const observer = await connect(`observer@${teamA}`);
    const seen = inbox(observer);
    await observer.subscribeAsync("#", { qos: 1 });
    const sensor = await connect(`sensor@${teamA}`);
    await sensor.publishAsync("sensors/t1", "21.5", { qos: 1 });
    await sensor.publishAsync("commands/x", "forbidden", { qos: 1 });
    await sensor.publishAsync("sensors/sentinel", "end", { qos: 1 });
    await seen.until("sensors/sentinel");
    expect(seen.messages.map((m) => `${m.topic}=${m.payload}`)).toEqual([
      "sensors/t1=21.5",
      "sensors/sentinel=end",
    ]);
    // Dropped, not disconnected (EMQX's deny_action = ignore).
    expect(sensor.connected).toBe(true);

    const commands = inbox(sensor);
    await sensor.subscribeAsync("commands/#", { qos: 1 });
    await observer.publishAsync("commands/go", "now", { qos: 1 });
    await commands.until("commands/go");
    await Promise.all([sensor.endAsync(), observer.endAsync()]);
  });

  test("unsubscribing stops delivery", async () => {
    const observer = await connect(`observer@${teamA}`);
    const seen = inbox(observer);
    await observer.subscribeAsync("unsub/a", { qos: 1 });
    await observer.subscribeAsync("unsub/end", { qos: 1 });
    await observer.unsubscribeAsync("unsub/a");
    await observer.publishAsync("unsub/a", "after", { qos: 1 });
    await observer.publishAsync("unsub/end", "end", { qos: 1 });
    await seen.until("unsub/end");
    expect(seen.messages.map((m) => m.topic)).toEqual(["unsub/end"]);
    await observer.endAsync();
  });

  test("teams never see each other's messages, retained ones included", async () => {
    const intruder = await connect(`intruder@${teamB}`);
    const stolen = inbox(intruder);
    expect(await granted(intruder, ["#", `ff/v1/${teamA}/c/#`])).toEqual([1, 1]);
    const observer = await connect(`observer@${teamA}`);
    await observer.publishAsync("commands/cfg", "A", { qos: 1, retain: true });
    await intruder.publishAsync("commands/cfg", "B", { qos: 1, retain: true });
    await observer.publishAsync("isolation/sentinel", "A", { qos: 1 });
    await intruder.publishAsync("isolation/own", "B", { qos: 1 });
    await stolen.until("isolation/own");
    expect(stolen.messages.every((m) => m.payload === "B")).toBe(true);

    const sensor = await connect(`sensor@${teamA}`);
    const retained = inbox(sensor);
    await sensor.subscribeAsync("commands/#", { qos: 1 });
    await retained.until("commands/cfg");
    expect(retained.messages).toEqual([{ topic: "commands/cfg", payload: "A", retain: true }]);
    await Promise.all([sensor.endAsync(), observer.endAsync(), intruder.endAsync()]);
  });

  test("new ACLs decide the client's next operation", async () => {
    const { id } = await team();
    await createClient(id, "dev", [{ action: "subscribe", pattern: "in/#" }]);
    await createClient(id, "watch", [{ action: "both", pattern: "#" }]);
    const watch = await connect(`watch@${id}`);
    const seen = inbox(watch);
    await watch.subscribeAsync("#", { qos: 1 });
    const dev = await connect(`dev@${id}`);
    expect(await granted(dev, ["out/#"])).toEqual([128]);
    await dev.publishAsync("out/1", "before", { qos: 1 });

    const put = await server.request("PUT", clientPath(id, "dev"), {
      body: { acls: [{ action: "both", pattern: "out/#" }] },
    });
    expect(put.status).toBe(201);
    expect(dev.connected).toBe(true);
    await dev.publishAsync("out/2", "after", { qos: 1 });
    await seen.until("out/2");
    expect(seen.messages.map((m) => m.payload)).toEqual(["after"]);
    expect(await granted(dev, ["out/#", "in/#"])).toEqual([1, 128]);
    await Promise.all([dev.endAsync(), watch.endAsync()]);
  });

  test("a new password ends the live session; the old one is refused", async () => {
    const { id } = await team();
    await createClient(id, "rotating", [{ action: "both", pattern: "#" }]);
    const client = await connect(`rotating@${id}`);
    const gone = closed(client);
    const put = await server.request("PUT", clientPath(id, "rotating"), {
      body: { password: "a-brand-new-password" },
    });
    expect(put.status).toBe(201);
    await gone;
    expect(await refusal(`rotating@${id}`)).toBe(5);
    const again = await connect(`rotating@${id}`, { password: "a-brand-new-password" });
    await again.endAsync();
  });

  test("deleting a client ends its live session, and it cannot connect again", async () => {
    const { id } = await team();
    await createClient(id, "doomed", [{ action: "both", pattern: "#" }]);
    const client = await connect(`doomed@${id}`);
    const gone = closed(client);
    expect((await server.request("DELETE", clientPath(id, "doomed"))).status).toBe(200);
    await gone;
    expect(await refusal(`doomed@${id}`)).toBe(5);
  });

  test("deleting the team ends its clients' live sessions", async () => {
    const { id } = await team();
    await createClient(id, "orphan", [{ action: "both", pattern: "#" }]);
    const client = await connect(`orphan@${id}`);
    const gone = closed(client);
    expect((await server.request("DELETE", `/api/v1/teams/${id}`)).status).toBe(200);
    await gone;
    expect(await refusal(`orphan@${id}`)).toBe(5);
  });

  test("a second connection with the same client id takes over the session", async () => {
    const first = await connect(`observer@${teamA}`);
    const gone = closed(first);
    const second = await connect(`observer@${teamA}`);
    await gone;
    expect(second.connected).toBe(true);
    await second.endAsync();
  });

  test("MQTT over WebSocket on the API's own port", async () => {
    const url = `${server.url.replace("http", "ws")}/mqtt`;
    const observer = await connect(`observer@${teamA}`, { url });
    const seen = inbox(observer);
    await observer.subscribeAsync("ws/#", { qos: 1 });
    const sensor = await connect(`sensor@${teamA}`);
    await sensor.publishAsync("sensors/ignored", "x", { qos: 1 });
    await observer.publishAsync("ws/hello", "over websocket", { qos: 1 });
    await seen.until("ws/hello");
    await Promise.all([observer.endAsync(), sensor.endAsync()]);
    expect(await refusal(`observer@${teamA}`, { url, password: "wrong-password" })).toBe(5);
  });
});

describe("guessing limits on CONNECT", () => {
  test("a client past its failed CONNECTs is refused even with its password, until the window ends; another client is not", async () => {
    const limited = await startServer({
      broker: {
        mode: "embedded",
        host: "127.0.0.1",
        port: 0,
        failedConnects: {
          perClient: { max: 3, windowMs: 2_000 },
          perAddress: { max: 100, windowMs: 2_000 },
        },
      },
    });
    try {
      const url = `mqtt://127.0.0.1:${limited.app.mqttPort}`;
      const teamId = (await limited.request("POST", "/api/v1/teams", { body: { name: "Guessed" } }))
        .body.id;
      for (const username of ["target", "bystander"]) {
        const made = await limited.request("POST", `/api/v1/teams/${teamId}/broker/client`, {
          body: { username, password: PASSWORD, acls: [{ action: "both", pattern: "#" }] },
        });
        expect(made.status).toBe(201);
      }
      for (let i = 0; i < 3; i++) {
        expect(await refusal(`target@${teamId}`, { url, password: `guess-${i}` })).toBe(5);
      }
      expect(await refusal(`target@${teamId}`, { url })).toBe(5);
      const bystander = await connect(`bystander@${teamId}`, { url });
      await bystander.endAsync();
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      const target = await connect(`target@${teamId}`, { url });
      await target.endAsync();
    } finally {
      await limited.close();
    }
  });

  test("an address past its failed CONNECTs is refused for every client", async () => {
    const limited = await startServer({
      broker: {
        mode: "embedded",
        host: "127.0.0.1",
        port: 0,
        failedConnects: { perAddress: { max: 2, windowMs: 60_000 } },
      },
    });
    try {
      const url = `mqtt://127.0.0.1:${limited.app.mqttPort}`;
      const teamId = (await limited.request("POST", "/api/v1/teams", { body: { name: "Scanned" } }))
        .body.id;
      const made = await limited.request("POST", `/api/v1/teams/${teamId}/broker/client`, {
        body: { username: "real", password: PASSWORD, acls: [{ action: "both", pattern: "#" }] },
      });
      expect(made.status).toBe(201);
      expect(await refusal(`nobody@${teamId}`, { url })).toBe(5);
      expect(await refusal("no-team-at-all", { url })).toBe(5);
      expect(await refusal(`real@${teamId}`, { url })).toBe(5);
    } finally {
      await limited.close();
    }
  });
});

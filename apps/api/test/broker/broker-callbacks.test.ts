// The HTTP callbacks an external broker (EMQX) calls — POST /api/comms/v2/auth and /acls — answer
// exactly as the embedded broker decides: the same credentials and topics are asked of both, the
// callbacks over HTTP and the broker through a real MQTT client. Also: broker tokens, what
// persists across a restart, and the external mode.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDb } from "@flowplane/db/testing";
import { startServer, type TestServer } from "../support/harness";
import { closeAll, connectMqtt, granted, inbox, sessionPresent } from "../support/mqtt-client";

const PASSWORD = "callback-secret-1";
let server: TestServer;
let brokerToken: string;
let teamA: string;
let teamB: string;

async function newTeam(s: TestServer, name: string): Promise<string> {
  const reply = await s.request("POST", "/api/v1/teams", { body: { name } });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.id;
}

async function newClient(
  s: TestServer,
  teamId: string,
  username: string,
  acls: { action: string; pattern: string }[],
) {
  const reply = await s.request("POST", `/api/v1/teams/${teamId}/broker/client`, {
    body: { username, password: PASSWORD, acls },
  });
  expect(reply.status, reply.text).toBe(201);
}

const connect = (
  url: string,
  username: string,
  password = PASSWORD,
  clientId = username,
  clean = true,
) => connectMqtt(username, { url, password, clientId, clean });

/** The callback's answer for each topic of one client and action. */
async function aclAnswers(username: string, action: string, topics: string[]) {
  const answers = [];
  for (const topic of topics) {
    answers.push((await callback("acls", { username, topic, action })).body.result);
  }
  return answers;
}

const brokerUrlOf = async (s: TestServer): Promise<string> =>
  (await s.request("GET", "/api/v1/settings")).body["team:broker:url"];

const callback = (path: string, body: unknown, token: string | null = brokerToken) =>
  server.request("POST", `/api/comms/v2/${path}`, { token, body });

beforeAll(async () => {
  server = await startServer({ broker: "embedded" });
  const created = await server.request("POST", "/api/v1/broker/tokens", {
    body: { name: "emqx" },
  });
  expect(created.status, created.text).toBe(201);
  brokerToken = created.body.token;
  expect(brokerToken).toMatch(/^fpb_/);
  teamA = await newTeam(server, "Callbacks A");
  teamB = await newTeam(server, "Callbacks B");
  await newClient(server, teamA, "sensor", [
    { action: "publish", pattern: "sensors/#" },
    { action: "subscribe", pattern: "commands/#" },
    { action: "both", pattern: "shared/+" },
  ]);
  await newClient(server, teamB, "other", [{ action: "both", pattern: "#" }]);
});
afterAll(async () => {
  await closeAll();
  await server.close();
});

describe("broker tokens", () => {
  test("administrators create, list and revoke them; the value is shown once", async () => {
    const list = await server.request("GET", "/api/v1/broker/tokens");
    expect(list.status).toBe(200);
    expect(list.body.tokens.map((t: { name: string }) => t.name)).toContain("emqx");
    expect(list.text).not.toContain(brokerToken);

    const extra = await server.request("POST", "/api/v1/broker/tokens", { body: { name: "tmp" } });
    const ask = { clientId: "x", username: "x", password: "x" };
    expect((await callback("auth", ask, extra.body.token)).status).toBe(200);
    const revoked = await server.request("DELETE", `/api/v1/broker/tokens/${extra.body.id}`);
    expect(revoked.status).toBe(200);
    expect((await callback("auth", ask, extra.body.token)).status).toBe(401);

    const user = await server.user();
    const refused = await server.request("POST", "/api/v1/broker/tokens", {
      token: user.token,
      body: { name: "mine" },
    });
    expect(refused.status).toBe(403);
  });

  test("the callbacks refuse anything but a broker token", async () => {
    const ask = { clientId: `sensor@${teamA}`, username: `sensor@${teamA}`, password: PASSWORD };
    expect((await callback("auth", ask, null)).status).toBe(401);
    expect((await callback("auth", ask, server.adminToken)).status).toBe(401);
    expect(
      (await callback("acls", { username: "a@b", topic: "t", action: "publish" }, null)).status,
    ).toBe(401);
    const bad = await callback("auth", { clientId: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("invalid_request");
  });
});

describe("the callbacks answer as the embedded broker decides", () => {
  test("authentication: allow with the team's mount, or deny", async () => {
    const url = await brokerUrlOf(server);
    const cases: { username: string; password: string; clientId?: string }[] = [
      { username: `sensor@${teamA}`, password: PASSWORD },
      { username: `sensor@${teamA}`, password: "wrong-password" },
      { username: `sensor@${teamA}`, password: PASSWORD, clientId: "not-the-username" },
      { username: `sensor@${teamB}`, password: PASSWORD },
      { username: "sensor", password: PASSWORD },
      { username: `ghost@${teamA}`, password: PASSWORD },
      { username: `other@${teamB}`, password: PASSWORD },
    ];
    for (const c of cases) {
      const clientId = c.clientId ?? c.username;
      const http = await callback("auth", { clientId, username: c.username, password: c.password });
      expect(http.status).toBe(200);
      const accepted = await connect(url, c.username, c.password, clientId).then(
        async (client) => {
          await client.endAsync();
          return true;
        },
        (error: { code?: number }) => {
          expect(error.code).toBe(5);
          return false;
        },
      );
      const teamId = c.username.split("@")[1];
      expect(http.body, JSON.stringify(c)).toEqual(
        accepted
          ? { result: "allow", is_superuser: false, client_attrs: { team: `ff/v1/${teamId}/c/` } }
          : { result: "deny" },
      );
    }
  });

  test("subscriptions: the ACL answer is the SUBACK's", async () => {
    const url = await brokerUrlOf(server);
    const filters = [
      "commands/#",
      "commands/a/b",
      "sensors/#",
      "shared/x",
      "shared/+",
      "shared/#",
      "#",
      "$SYS/#",
    ];
    const client = await connect(url, `sensor@${teamA}`);
    const grants = await granted(client, filters, 0);
    await client.endAsync();
    const answers = await aclAnswers(`sensor@${teamA}`, "subscribe", filters);
    expect(answers).toEqual(grants.map((g) => (g === 128 ? "deny" : "allow")));
    expect(answers).toEqual(["allow", "allow", "deny", "allow", "allow", "deny", "deny", "deny"]);
  });

  test("publishes: the ACL answer is whether the message is delivered", async () => {
    const url = await brokerUrlOf(server);
    await newClient(server, teamA, "witness", [{ action: "both", pattern: "#" }]);
    const witness = await connect(url, `witness@${teamA}`);
    const seen = inbox(witness);
    await witness.subscribeAsync("#", { qos: 1 });
    const sensor = await connect(url, `sensor@${teamA}`);
    const topics = ["sensors/t1", "sensors/a/b", "commands/x", "shared/y", "shared/y/z", "other"];
    for (const topic of topics) await sensor.publishAsync(topic, "m", { qos: 1 });
    await witness.publishAsync("zz/sentinel", "end", { qos: 1 });
    await seen.until("zz/sentinel");
    await Promise.all([sensor.endAsync(), witness.endAsync()]);
    const received = seen.messages.map((m) => m.topic);
    const answers = await aclAnswers(`sensor@${teamA}`, "publish", topics);
    expect(answers).toEqual(topics.map((t) => (received.includes(t) ? "allow" : "deny")));
    expect(answers).toEqual(["allow", "allow", "deny", "allow", "deny", "deny"]);
  });

  test("a deleted client is denied by both at once", async () => {
    await newClient(server, teamB, "brief", [{ action: "both", pattern: "#" }]);
    const ask = { username: `brief@${teamB}`, topic: "a", action: "publish" };
    expect((await callback("acls", ask)).body.result).toBe("allow");
    await server.request("DELETE", `/api/v1/teams/${teamB}/broker/client/brief`);
    expect((await callback("acls", ask)).body.result).toBe("deny");
    const auth = { clientId: `brief@${teamB}`, username: `brief@${teamB}`, password: PASSWORD };
    expect((await callback("auth", auth)).body).toEqual({ result: "deny" });
  });
});

describe("across a restart, and in external mode", () => {
  test("retained messages and persistent sessions survive the platform's restart", async () => {
    const testDb = await createTestDb();
    const dataDir = await mkdtemp(join(tmpdir(), "flowplane-broker-"));
    try {
      let first: TestServer | undefined = await startServer({
        db: testDb,
        dataDir,
        broker: "embedded",
      });
      const team = await newTeam(first, "Persistent");
      await newClient(first, team, "keeper", [{ action: "both", pattern: "#" }]);
      await newClient(first, team, "feeder", [{ action: "publish", pattern: "queue/#" }]);
      const firstUrl = await brokerUrlOf(first);
      const keeper = await connect(firstUrl, `keeper@${team}`);
      await keeper.publishAsync("config/mode", "eco", { qos: 1, retain: true });
      await keeper.endAsync();
      // A persistent session with a subscription, then offline while a message is queued.
      const session = await connect(firstUrl, `keeper@${team}`, PASSWORD, undefined, false);
      await session.subscribeAsync("queue/#", { qos: 1 });
      await session.endAsync();
      const feeder = await connect(firstUrl, `feeder@${team}`);
      await feeder.publishAsync("queue/0", "while offline", { qos: 1 });
      await feeder.endAsync();
      await first.close();
      first = undefined;

      const second = await startServer({ db: testDb, dataDir, broker: "embedded" });
      try {
        const url = await brokerUrlOf(second);
        const again = await connect(url, `keeper@${team}`, PASSWORD, undefined, false);
        const { messages, until } = inbox(again);
        expect(sessionPresent(again)).toBe(true);
        // The restored subscription still works, with bare topics.
        await again.publishAsync("queue/1", "after restart", { qos: 1 });
        await again.subscribeAsync("config/#", { qos: 1 });
        await Promise.all([until("queue/0"), until("queue/1"), until("config/mode")]);
        expect(messages.map(({ topic, payload }) => ({ topic, payload }))).toEqual(
          expect.arrayContaining([
            { topic: "queue/0", payload: "while offline" },
            { topic: "queue/1", payload: "after restart" },
            { topic: "config/mode", payload: "eco" },
          ]),
        );
        await again.endAsync();
      } finally {
        await second.close();
      }
    } finally {
      await testDb.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  test("external mode: no embedded broker; settings name the external one", async () => {
    const external = await startServer({
      broker: { mode: "external", url: "mqtt://broker.example.com:1883" },
    });
    try {
      const settings = await external.request("GET", "/api/v1/settings");
      expect(settings.body["team:broker:host"]).toBe("broker.example.com");
      expect(settings.body["team:broker:url"]).toBe("mqtt://broker.example.com:1883");
      expect(external.app.mqttPort).toBeUndefined();
      const token = await external.request("POST", "/api/v1/broker/tokens", {
        body: { name: "e" },
      });
      const reply = await external.request("POST", "/api/comms/v2/auth", {
        token: token.body.token,
        body: { clientId: "a@b", username: "a@b", password: "nope" },
      });
      expect(reply.body).toEqual({ result: "deny" });
    } finally {
      await external.close();
    }
  });
});

// The devices' live channel over the embedded broker, driven by an agent that speaks the real
// agent's MQTT protocol (support/simulated-agent.ts): credentials carry the broker, changes are
// pushed at once (`update`), status is recorded as it comes and a lost session shows the device
// offline; a device reaches only its own topics; new credentials or a deletion end its session.
// The real agent over the same channel: device-agent-live.test.ts.
import type { MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { closeAll, connectMqtt, granted, inbox, refusalOf } from "../support/mqtt-client";
import { type AgentCredentials, SimulatedAgent } from "../support/simulated-agent";
import {
  createBrokerClient,
  createInstance,
  createSnapshot,
  createTeam,
  makeUser,
  type TestTeam,
  type TestUser,
} from "../support/team-fixtures";
import { waiter } from "../support/until";

const until = waiter(15_000);

let server: TestServer;
let owner: TestUser;
let team: TestTeam;
let instanceId: string;
const agents: SimulatedAgent[] = [];

beforeAll(async () => {
  server = await startServer({ broker: "embedded", instances: "in-memory" });
  owner = await makeUser(server);
  team = await createTeam(server, owner);
  instanceId = await createInstance(server, owner, team.id);
});
afterAll(async () => {
  for (const agent of agents) await agent.end().catch(() => {});
  await closeAll();
  await server.close();
});

let counter = 0;
async function device(body: Record<string, unknown> = {}) {
  const reply = await server.request("POST", "/api/v1/devices", {
    token: owner.token,
    body: { name: `live-${++counter}`, team: team.id, ...body },
  });
  expect(reply.status, reply.text).toBe(200);
  return { id: reply.body.id as string, credentials: reply.body.credentials };
}

async function connect(credentials: AgentCredentials) {
  const agent = await SimulatedAgent.connect(credentials);
  agents.push(agent);
  return agent;
}

const view = async (id: string) =>
  (await server.request("GET", `/api/v1/devices/${id}`, { token: owner.token })).body;

describe("the devices' live channel", () => {
  test("credentials carry the broker: its URL, the device's username and a password", async () => {
    const { id, credentials } = await device();
    const settings = await server.request("GET", "/api/v1/settings");
    expect(credentials.broker).toEqual({
      url: settings.body["team:broker:url"],
      username: `device:${team.id}:${id}`,
      password: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
    });
    const again = await server.request("POST", `/api/v1/devices/${id}/generate_credentials`, {
      token: owner.token,
    });
    expect(again.body.broker.username).toBe(`device:${team.id}:${id}`);
    expect(again.body.broker.password).not.toBe(credentials.broker.password);
  });

  test("a target set reaches a connected device at once; its status is recorded as it comes", async () => {
    const { id, credentials } = await device({ instance: instanceId });
    const agent = await connect(credentials.broker);
    // The agent's first status, as it starts: "unknown" asks for an update, in step or not.
    await agent.publishStatus({ project: instanceId, state: "unknown" });
    const update = await agent.nextCommand((c) => c.command === "update");
    // The instance's device: no `application` key (the agent would read it as a change).
    expect(update).toEqual({
      command: "update",
      ownerType: "project",
      project: instanceId,
      snapshot: null,
      settings: expect.any(String),
      mode: "autonomous",
      licensed: false,
    });
    await agent.publishStatus();
    await until("online", async () =>
      (await view(id)).onlineStatus === "online" ? true : undefined,
    );

    const snapshotId = await createSnapshot(server, owner, instanceId);
    const started = performance.now();
    const set = await server.request("PUT", `/api/v1/devices/${id}`, {
      token: owner.token,
      body: { targetSnapshot: snapshotId },
    });
    expect(set.status, set.text).toBe(200);
    const pushed = await agent.nextCommand(
      (c) => c.command === "update" && c.snapshot === snapshotId,
    );
    const latency = performance.now() - started;
    expect(latency).toBeLessThan(5_000);
    expect(pushed).toMatchObject({ project: instanceId, snapshot: snapshotId });

    // It runs it and says so: the platform shows it.
    await agent.publishStatus({ state: "running", nodeRedVersion: "4.1.15" });
    await until("running", async () => {
      const seen = await view(id);
      return seen.activeSnapshot?.id === snapshotId && seen.status === "running" ? seen : undefined;
    });

    // A change of its variables: a new settings hash, pushed.
    const env = await server.request("PUT", `/api/v1/devices/${id}/settings`, {
      token: owner.token,
      body: { env: [{ name: "LINE", value: "two" }] },
    });
    expect(env.status, env.text).toBe(200);
    const settings = await agent.nextCommand(
      (c) => c.command === "update" && c.settings !== pushed.settings,
    );
    expect(settings.snapshot).toBe(snapshotId);
  });

  test("a lost session shows the device offline, and a new one online", async () => {
    const { id, credentials } = await device();
    const agent = await connect(credentials.broker);
    await agent.publishStatus();
    await until("online", async () =>
      (await view(id)).onlineStatus === "online" ? true : undefined,
    );
    await agent.end();
    await until("offline", async () =>
      (await view(id)).onlineStatus === "offline" ? true : undefined,
    );
    await connect(credentials.broker);
    await until("online again", async () =>
      (await view(id)).onlineStatus === "online" ? true : undefined,
    );
  });

  test("a device reaches its own topics only", async () => {
    const one = await device();
    const other = await device();
    const agent = await connect(one.credentials.broker);
    const theirs = `ff/v1/${team.id}/d/${other.id}`;
    const mine = `ff/v1/${team.id}/d/${one.id}`;
    expect(
      await granted(agent.client, [`${theirs}/command`, `ff/v1/${team.id}/d/+/command`, "#"]),
    ).toEqual([128, 128, 128]);
    expect(await granted(agent.client, [`${mine}/command`])).toEqual([1]);
    // Another device's status, published by this one: dropped, the other is never seen.
    await agent.client.publishAsync(`${theirs}/status`, JSON.stringify({ state: "running" }), {
      qos: 1,
    });
    await agent.publishStatus();
    await until("its own status", async () =>
      (await view(one.id)).onlineStatus === "online" ? true : undefined,
    );
    expect((await view(other.id)).onlineStatus).toBe("not-seen");

    // A team client with `#` sees none of the devices' traffic (its topics are its team's).
    const username = await createBrokerClient(server, owner, team.id);
    const url = one.credentials.broker.url as string;
    const watcher: MqttClient = await connectMqtt(`${username}@${team.id}`, {
      url,
      password: "walked-client-secret",
    });
    expect(await granted(watcher, ["#", `${mine}/status`, `${mine}/command`])).toEqual([1, 1, 1]);
    await agent.publishStatus({ state: "running" });
    await server.request("PUT", `/api/v1/devices/${one.id}/settings`, {
      token: owner.token,
      body: { env: [{ name: "SEEN", value: "no" }] },
    });
    await agent.nextCommand((c) => c.command === "update");
    const messages = inbox(watcher);
    await watcher.publishAsync("sentinel", "s", { qos: 1 });
    await messages.until("sentinel");
    expect(messages.messages.map((m) => m.topic)).toEqual(["sentinel"]);

    // Another team's device credentials are not this team's.
    const stranger = await makeUser(server);
    const otherTeam = await createTeam(server, stranger);
    const refused = await refusalOf(`device:${otherTeam.id}:${one.id}`, {
      url,
      password: one.credentials.broker.password,
    });
    expect(refused).toBe(5);
  });

  test("new credentials and a deletion end the device's session at once", async () => {
    const { id, credentials } = await device();
    const agent = await connect(credentials.broker);
    const closed = new Promise<void>((resolve) => agent.client.once("close", () => resolve()));
    await server.request("POST", `/api/v1/devices/${id}/generate_credentials`, {
      token: owner.token,
    });
    await closed;
    expect(
      await refusalOf(credentials.broker.username, {
        url: credentials.broker.url,
        password: credentials.broker.password,
      }),
    ).toBe(5);

    const second = await device();
    const live = await connect(second.credentials.broker);
    const ended = new Promise<void>((resolve) => live.client.once("close", () => resolve()));
    const deleted = await server.request("DELETE", `/api/v1/devices/${second.id}`, {
      token: owner.token,
    });
    expect(deleted.status).toBe(200);
    await ended;
  });

  test("with the broker gone the device is offline; back, it is online without a restart", async () => {
    const { id, credentials } = await device();
    const agent = await SimulatedAgent.connect(credentials.broker, { reconnectPeriod: 200 });
    agents.push(agent);
    await agent.publishStatus();
    await until("online", async () =>
      (await view(id)).onlineStatus === "online" ? true : undefined,
    );
    await server.app.embeddedBroker!.suspend();
    await until("offline", async () =>
      (await view(id)).onlineStatus === "offline" ? true : undefined,
    );
    await server.app.embeddedBroker!.resume();
    await until("online again", async () =>
      (await view(id)).onlineStatus === "online" ? true : undefined,
    );
  });

  test("what a device sends cannot take the platform down: a huge log batch, a status that is not JSON, a retained one", async () => {
    const { id, credentials } = await device();
    const agent = await connect(credentials.broker);
    // Someone reads its log: the platform asks for it, and keeps what comes.
    const read = await server.request("GET", `/api/v1/devices/${id}/logs`, {
      token: owner.token,
    });
    expect(read.status, read.text).toBe(200);
    await agent.nextCommand((c) => c.command === "startLog");
    // 150,000 entries in one message (1.5 MB): more than one spread call can take.
    const huge = JSON.stringify(new Array(150_000).fill({ msg: "x" }));
    await agent.client.publishAsync(agent.topic("logs"), huge, { qos: 1 });
    await agent.client.publishAsync(
      agent.topic("logs"),
      JSON.stringify({ ts: Date.now(), level: "info", msg: "y".repeat(100_000) }),
      { qos: 1 },
    );
    const lines = await until("the kept lines", async () => {
      const reply = await server.request("GET", `/api/v1/devices/${id}/logs?limit=1000`, {
        token: owner.token,
      });
      const log = reply.body.log as { msg: string }[];
      return log.some((line) => line.msg.startsWith("y")) ? log : undefined;
    });
    expect(lines.length).toBeLessThanOrEqual(1000);
    expect(lines.at(-1)!.msg.length).toBe(8 * 1024);

    // Not JSON: ignored (not "busy updating"); retained: recorded, and kept for no one (the
    // broker clears the flag: nothing could subscribe to it but the platform, which reads it now).
    await agent.client.publishAsync(agent.topic("status"), "not json", { qos: 1 });
    await agent.client.publishAsync(
      agent.topic("status"),
      JSON.stringify({ ...agent.state, state: "running" }),
      { qos: 1, retain: true },
    );
    await until("the retained status recorded", async () =>
      (await view(id)).status === "running" ? true : undefined,
    );
    // An upgrade no door can read (a malformed escape) fails alone; the platform answers on.
    const refused = await fetch(`${server.url}/api/v1/devices/x/editor/comms/%ZZ`, {
      headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13" },
    }).catch((error: unknown) => error);
    expect(refused).toBeDefined();
    expect((await server.request("GET", "/api/v1/settings")).status).toBe(200);
  });
});

// The devices' channel over an external broker (EMQX's path), without EMQX: an aedes broker that
// asks the platform's HTTP callbacks as EMQX's HTTP authentication and authorization would
// (support/emqx-like-broker.ts), and the platform with `broker: { mode: "external" }`, connected
// to it as its own client. A change reaches a connected agent at once, its status is recorded,
// and its session's end (EMQX's client event) shows it offline.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type EmqxLikeBroker, startEmqxLikeBroker } from "../support/emqx-like-broker";
import { startServer, type TestServer } from "../support/harness";
import { SimulatedAgent } from "../support/simulated-agent";
import {
  createInstance,
  createSnapshot,
  createTeam,
  makeUser,
  type TestTeam,
  type TestUser,
} from "../support/team-fixtures";
import { waiter } from "../support/until";

const until = waiter(15_000);

let broker: EmqxLikeBroker;
let server: TestServer;
let owner: TestUser;
let team: TestTeam;
let instanceId: string;
let brokerToken: string;
const agents: SimulatedAgent[] = [];

beforeAll(async () => {
  broker = await startEmqxLikeBroker();
  server = await startServer({
    broker: { mode: "external", url: broker.url },
    instances: "in-memory",
  });
  const created = await server.request("POST", "/api/v1/broker/tokens", {
    body: { name: "emqx" },
  });
  expect(created.status, created.text).toBe(201);
  brokerToken = created.body.token;
  // The platform's client has been waiting at the broker for its callbacks: now they answer.
  broker.useCallbacks(server.url, brokerToken);
  owner = await makeUser(server);
  team = await createTeam(server, owner);
  instanceId = await createInstance(server, owner, team.id);
});
afterAll(async () => {
  for (const agent of agents) await agent.end().catch(() => {});
  await server?.close();
  await broker?.close();
});

const callback = (path: string, body: unknown) =>
  server.request("POST", `/api/comms/v2/${path}`, { token: brokerToken, body });

const view = async (id: string) =>
  (await server.request("GET", `/api/v1/devices/${id}`, { token: owner.token })).body;

describe("the devices' channel over an external broker", () => {
  test("the platform's own identity: unmounted, and only on the channel's topics", async () => {
    await until("the platform connected", async () =>
      server.logs.some((line) => line.includes("connected to the external MQTT"))
        ? true
        : undefined,
    );
    // A made-up platform password is refused; the callbacks never mount a device or the platform.
    const forged = await callback("auth", {
      clientId: "platform:abc",
      username: "platform:abc",
      password: "guess",
    });
    expect(forged.body).toEqual({ result: "deny" });
    const acl = async (topic: string, action: string) =>
      (await callback("acls", { username: "platform:abc", topic, action })).body.result;
    expect(await acl("ff/v1/t/d/d1/command", "publish")).toBe("allow");
    expect(await acl("ff/v1/t/d/d1/status", "publish")).toBe("deny");
    expect(await acl("ff/v1/+/d/+/status", "subscribe")).toBe("allow");
    expect(await acl("$SYS/brokers/+/clients/+/connected", "subscribe")).toBe("allow");
    expect(await acl("#", "subscribe")).toBe("deny");
    expect(await acl("ff/v1/t/c/anything", "publish")).toBe("deny");
  });

  test("credentials name the external broker; a change is pushed and the status recorded", async () => {
    const reply = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: "over-emqx", team: team.id, instance: instanceId },
    });
    expect(reply.status, reply.text).toBe(200);
    const id = reply.body.id as string;
    const credentials = reply.body.credentials.broker;
    expect(credentials).toMatchObject({ url: broker.url, username: `device:${team.id}:${id}` });
    const auth = await callback("auth", {
      clientId: credentials.username,
      username: credentials.username,
      password: credentials.password,
    });
    expect(auth.body).toEqual({ result: "allow", is_superuser: false, client_attrs: { team: "" } });

    const agent = await SimulatedAgent.connect(credentials);
    agents.push(agent);
    await agent.publishStatus({ project: instanceId, state: "unknown" });
    await agent.nextCommand((c) => c.command === "update");
    await agent.publishStatus();
    await until("online", async () =>
      (await view(id)).onlineStatus === "online" ? true : undefined,
    );

    const snapshotId = await createSnapshot(server, owner, instanceId);
    const set = await server.request("PUT", `/api/v1/devices/${id}`, {
      token: owner.token,
      body: { targetSnapshot: snapshotId },
    });
    expect(set.status, set.text).toBe(200);
    const pushed = await agent.nextCommand(
      (c) => c.command === "update" && c.snapshot === snapshotId,
    );
    expect(pushed).toMatchObject({ project: instanceId, snapshot: snapshotId });
    await agent.publishStatus({ state: "running", nodeRedVersion: "4.1.15" });
    await until("running", async () => {
      const seen = await view(id);
      return seen.activeSnapshot?.id === snapshotId && seen.status === "running" ? seen : undefined;
    });

    // The agent connecting again takes its session over: the old one's end (`takenover`) is not
    // the device's.
    const again = await SimulatedAgent.connect(credentials);
    agents.push(again);
    await until("the old connection closed", async () =>
      agent.client.connected ? undefined : true,
    );
    await again.publishStatus({ ...agent.state });
    // The broker's events for the two sessions arrive apart from the status: whatever their
    // order, the device ends online (its session writes are applied in the order they came).
    await until("online again", async () =>
      (await view(id)).onlineStatus === "online" ? true : undefined,
    );

    // Its session ends (EMQX's `disconnected` event): offline at once.
    await again.end();
    await until("offline", async () =>
      (await view(id)).onlineStatus === "offline" ? true : undefined,
    );
  });
});

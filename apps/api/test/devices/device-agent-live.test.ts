// The real FlowFuse device agent (4.2.1, support/device-agent.ts) on the live channel: started with
// the broker credentials its device was created with (device.yml's brokerURL, brokerUsername,
// brokerPassword) against a server with the embedded broker, polling every five minutes (`-i 300`)
// so that nothing but the channel can explain how fast it learns and tells. It connects and
// reports over MQTT (the HTTP check-in never called); a target set reaches it at once (the time
// from the PUT to the new flow answering is logged); what it runs shows in the API as it happens;
// with the broker gone it keeps running its flow and shows offline, and it comes back by itself;
// another team sees nothing of it and another device cannot listen to its commands. A snapshot
// taken of it is what it reports (the agent's `upload`): a flow changed on the device itself, its
// credentials opened with the device's secret, which a second device then runs. Each device's
// agent installs Node-RED with npm (~20 s or more): slow, so CI runs it and a machine without the
// agent's package skips it (CI fails instead).
import { decryptCredentials } from "@flowplane/auth";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type Agent,
  agentPackage,
  DeviceAgents,
  helloCredentials,
  helloFlows,
  helloOf,
} from "../support/device-agent";
import { startServer, type TestServer } from "../support/harness";
import { closeAll, connectMqtt, granted } from "../support/mqtt-client";
import {
  createInstance,
  createTeam,
  makeUser,
  type TestTeam,
  type TestUser,
} from "../support/team-fixtures";
import { waiter } from "../support/until";

/** The Node-RED the snapshots name (the platform's default for devices). */
const NODE_RED = "4.1.15";
const until = waiter(60_000, 250);

let server: TestServer;
let owner: TestUser;
let team: TestTeam;
let instanceId: string;
let applicationId: string;
const agents = new DeviceAgents();

/** A snapshot of the instance holding `label`'s flow and credential; its id. */
async function snapshotOf(label: string) {
  const reply = await server.request("POST", `/api/v1/projects/${instanceId}/snapshots`, {
    token: owner.token,
    body: {
      name: label,
      flows: helloFlows(label, false),
      credentials: helloCredentials(label),
      settings: { modules: { "node-red": NODE_RED } },
    },
  });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.id as string;
}

/** An application's device and its agent, started on the broker with the device's credentials. */
async function deviceOnTheBroker(name: string, targetSnapshot?: string) {
  const created = await server.request("POST", "/api/v1/devices", {
    token: owner.token,
    body: { name, type: "Raspberry Pi", team: team.id, application: applicationId },
  });
  expect(created.status, created.text).toBe(200);
  const device = created.body;
  if (targetSnapshot) await setTarget(device.id, targetSnapshot);
  const { broker } = device.credentials;
  const agent = await agents.start(
    {
      deviceId: device.id,
      token: device.credentials.token,
      credentialSecret: device.credentials.credentialSecret,
      forgeURL: server.url,
      brokerURL: broker.url,
      brokerUsername: broker.username,
      brokerPassword: broker.password,
    },
    { interval: 300 },
  );
  return { id: device.id as string, broker, agent };
}

async function setTarget(deviceId: string, snapshotId: string) {
  const set = await server.request("PUT", `/api/v1/devices/${deviceId}`, {
    token: owner.token,
    body: { targetSnapshot: snapshotId },
  });
  expect(set.status, set.text).toBe(200);
}

const view = async (id: string) =>
  (await server.request("GET", `/api/v1/devices/${id}`, { token: owner.token })).body;

/** The device's view once `check` holds of it. */
const viewWhen = (id: string, what: string, check: (v: Record<string, unknown>) => boolean) =>
  until(what, async () => {
    const seen = await view(id);
    return check(seen) ? seen : undefined;
  });

/** The requests of the agent's the server logged for the device: `method` on `/live/<route>`. */
const agentRequests = (deviceId: string, method: string, route: string) =>
  server.logs
    .flatMap((line) => line.split("\n"))
    .filter((line) => line.includes('"msg":"request"'))
    .filter((line) => line.includes(`"method":"${method}"`))
    .filter((line) => line.includes(`/api/v1/devices/${deviceId}/live/${route}`)).length;

/** The agent's HTTP check-ins (none: it reports over MQTT). */
const httpCheckIns = (deviceId: string) => agentRequests(deviceId, "POST", "state");

/** How many times the agent has started Node-RED. */
const starts = (agent: Agent) => agent.output.join("").split("Starting Node-RED").length - 1;

describe.skipIf(!agentPackage)("the real device agent on the live channel", () => {
  let line: { id: string; broker: { url: string; username: string }; agent: Agent };
  let alpha: string;
  let beta: string;

  beforeAll(async () => {
    await agents.install();
    server = await startServer({ broker: "embedded", instances: "in-memory" });
    owner = await makeUser(server);
    team = await createTeam(server, owner);
    instanceId = await createInstance(server, owner, team.id);
    const instance = await server.request("GET", `/api/v1/projects/${instanceId}`, {
      token: owner.token,
    });
    applicationId = instance.body.application.id;
    alpha = await snapshotOf("alpha");
    beta = await snapshotOf("beta");
  }, 240_000);

  afterAll(async () => {
    await agents.close();
    await closeAll();
    await server?.close();
  }, 60_000);

  test("connects over MQTT and reports there (never the HTTP check-in); runs its target, shown as it happens", async () => {
    line = await deviceOnTheBroker("live-line", alpha);
    // Online from its CONNECT on; what it runs comes with its first status, a moment later.
    const online = await viewWhen(
      line.id,
      "the device online, with its first status",
      (v) => v.onlineStatus === "online" && v.agentVersion !== null,
    );
    expect(online.agentVersion).toBe("4.2.1");
    expect(await helloOf(line.agent, "alpha", 240_000)).toMatchObject({
      flows: "alpha",
      device: "live-line",
      snapshot: alpha,
      secret: "secret-of-alpha",
    });
    // Its status comes over the channel as it changes: no heartbeat is due for five minutes.
    const running = await viewWhen(
      line.id,
      "the device reporting alpha running",
      (v) => v.status === "running" && (v.activeSnapshot as { id?: string })?.id === alpha,
    );
    expect(running).toMatchObject({
      onlineStatus: "online",
      agentVersion: "4.2.1",
      nodeRedVersion: NODE_RED,
      isDeploying: false,
    });
    // It still downloads the snapshot over HTTP, which the log shows: the count is of real lines.
    expect(agentRequests(line.id, "GET", "snapshot")).toBeGreaterThan(0);
    expect(httpCheckIns(line.id)).toBe(0);
  }, 300_000);

  test("a target set is pushed: the new flow answers within the agent's own stop and start", async () => {
    const before = starts(line.agent);
    const sent = Date.now();
    await setTarget(line.id, beta);
    expect(await helloOf(line.agent, "beta", 60_000)).toMatchObject({
      snapshot: beta,
      secret: "secret-of-beta",
    });
    const elapsed = Date.now() - sent;
    console.log(`push: PUT target → the new flow answering in ${elapsed} ms`);
    expect(elapsed).toBeLessThan(20_000);
    expect(starts(line.agent)).toBe(before + 1);
    const seen = await viewWhen(
      line.id,
      "the device reporting beta running",
      (v) => v.status === "running" && (v.activeSnapshot as { id?: string })?.id === beta,
    );
    expect(seen.nodeRedVersion).toBe(NODE_RED);
    expect(httpCheckIns(line.id)).toBe(0);
  }, 120_000);

  test("with the broker gone it keeps running and shows offline; it comes back by itself", async () => {
    const pid = line.agent.process.pid;
    const before = starts(line.agent);
    await server.app.embeddedBroker!.suspend();
    try {
      await viewWhen(line.id, "the device offline", (v) => v.onlineStatus === "offline");
      expect(await helloOf(line.agent, "beta", 5_000)).toMatchObject({ snapshot: beta });
    } finally {
      await server.app.embeddedBroker!.resume();
    }
    // The agent reconnects every 13–25 s.
    await until(
      "the device online again",
      async () => ((await view(line.id)).onlineStatus === "online" ? true : undefined),
      90_000,
    );
    expect(line.agent.process.exitCode).toBeNull();
    expect(line.agent.process.pid).toBe(pid);
    expect(starts(line.agent)).toBe(before);
    expect(await helloOf(line.agent, "beta", 5_000)).toMatchObject({ snapshot: beta });
    expect(httpCheckIns(line.id)).toBe(0);
  }, 150_000);

  test("another team sees nothing of it; another device cannot listen to its commands", async () => {
    const stranger = await makeUser(server);
    await createTeam(server, stranger);
    const seen = await server.request("GET", `/api/v1/devices/${line.id}`, {
      token: stranger.token,
    });
    expect(seen.status).toBe(404);
    const created = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: "neighbour", team: team.id, application: applicationId },
    });
    const { broker } = created.body.credentials;
    const neighbour = await connectMqtt(broker.username, {
      url: broker.url,
      password: broker.password,
    });
    const topic = `ff/v1/${team.id}/d/${line.id}/command`;
    expect(await granted(neighbour, [topic])).toEqual([128]);
  });

  test("a snapshot of the device is what it reports: a flow changed on it, its credential, run by a second device", async () => {
    // A change made on the device itself, which the platform never gave it: its flow file
    // rewritten (the agent's `upload` reads it, as it would after a deploy in its editor).
    const flowsFile = join(line.agent.dir, "project", "flows.json");
    const running = JSON.parse(await readFile(flowsFile, "utf8"));
    expect(running.find((n: { type: string }) => n.type === "tab").label).toBe("beta");
    await writeFile(flowsFile, JSON.stringify(helloFlows("edited-on-the-device", false)));

    const taken = await server.request("POST", `/api/v1/devices/${line.id}/snapshots`, {
      token: owner.token,
      body: { name: "from the device" },
    });
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body).toMatchObject({
      ownerType: "device",
      device: { id: line.id },
      modules: { "node-red": NODE_RED },
    });
    expect(line.agent.output.join("")).toContain("Capturing device snapshot");
    const exported = await server.request("POST", `/api/v1/snapshots/${taken.body.id}/export`, {
      token: owner.token,
      body: { credentialSecret: "the operator's secret" },
    });
    expect(exported.status, exported.text).toBe(200);
    const tab = exported.body.flows.flows.find((n: { type: string }) => n.type === "tab");
    expect(tab.label).toBe("edited-on-the-device");
    // Node-RED keeps the credential under the device's secret; the snapshot opened and sealed it.
    expect(
      decryptCredentials("the operator's secret", exported.body.flows.credentials),
    ).toMatchObject(helloCredentials("beta"));

    const second = await deviceOnTheBroker("second-line", taken.body.id);
    expect(await helloOf(second.agent, "edited-on-the-device", 240_000)).toMatchObject({
      device: "second-line",
      snapshot: taken.body.id,
      secret: "secret-of-beta",
    });
    await agents.stop(second.agent);
  }, 300_000);
});

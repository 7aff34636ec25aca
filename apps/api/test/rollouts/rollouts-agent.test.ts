// Rollouts (issue 38) to real FlowFuse device agents (4.2.1, support/device-agent.ts), three
// devices of one group running real Node-RED, whose flows report through the health tab the
// platform adds to what it serves them (to the server's base URL, where it really listens): a good
// snapshot rolls out wave by wave (one device, then the rest) and becomes the group's target; a
// snapshot whose flow throws stops at its first wave and that device runs its previous snapshot
// again while the others never changed (no restart of their Node-RED); so does a snapshot whose
// flow kills Node-RED (an unhandled rejection: red.js exits, the agent restarts it, the flows start
// again); and each time dryRun's plan is what then happens. The devices are started once and
// follow each rollout in turn, sharing one module cache (the agent's `moduleCache`: Node-RED
// installed once with npm, ~20 s or more, instead of on each snapshot). Slow, so CI runs it and a
// machine without the agent's package skips it (CI fails instead).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  type Agent,
  agentPackage,
  DEVICE_NODE_RED,
  DeviceAgents,
  helloOf,
  helloSnapshot,
} from "../support/device-agent";
import { freePort, startServer, type TestServer } from "../support/harness";
import { createInstance, createTeam, makeUser, type TestUser } from "../support/team-fixtures";
import { waiter } from "../support/until";

const until = waiter(90_000, 250);
const agents = new DeviceAgents();

let server: TestServer;
let owner: TestUser;
let applicationId: string;
let groupId: string;
let instanceId: string;
const devices: { id: string; name: string; agent: Agent }[] = [];
/** What the group runs first, and the good snapshot rolled out to it. */
let v1: string;
let v2: string;

/** A snapshot of the application (its instance's) holding `label`'s flow and `more` nodes. */
const snapshotOf = (label: string, more: Record<string, unknown>[] = []) =>
  helloSnapshot(server, owner.token, instanceId, label, more);

/** An inject that fires once, a second after the flows start, into a function running `func`. */
const onceAtStart = (name: string, func: string) => [
  {
    id: "at-start",
    type: "inject",
    z: "tab1",
    props: [{ p: "payload" }],
    payload: "",
    payloadType: "date",
    repeat: "",
    once: true,
    onceDelay: 1,
    wires: [["fn1"]],
  },
  { id: "fn1", type: "function", z: "tab1", name, func, outputs: 1, wires: [[]] },
];

/** What the device's /hello answers now (its flow's label), or undefined. */
async function helloNow(agent: Agent): Promise<string | undefined> {
  try {
    const reply = await fetch(`http://127.0.0.1:${agent.port}/hello`);
    return reply.status === 200 ? ((await reply.json()) as { flows: string }).flows : undefined;
  } catch {
    return undefined;
  }
}

/** How many times the agent has started Node-RED. */
const starts = (agent: Agent) => agent.output.join("").split("Starting Node-RED").length - 1;

/** The agent of a device. */
const agentOf = (id: string) => devices.find((d) => d.id === id)!.agent;

type WaveView = { devices: { id: string; state: string; reason?: string | null }[] };

/** Each wave's device ids, as a plan or a rollout lists them. */
const waveIds = (body: { waves: WaveView[] }) => body.waves.map((w) => w.devices.map((d) => d.id));

/** The rollout's plan (dryRun) and then the rollout itself, which must deploy the same waves. */
async function rollOut(snapshotId: string, more: Record<string, unknown> = {}) {
  const body = {
    snapshotId,
    deviceGroupId: groupId,
    waves: [{ count: 1 }, { percent: 100 }],
    reportTimeoutSeconds: 120,
    ...more,
  };
  const plan = await server.request("POST", "/api/v1/rollouts", {
    token: owner.token,
    body: { ...body, dryRun: true },
  });
  expect(plan.status, plan.text).toBe(200);
  expect(plan.body.dryRun).toBe(true);
  expect(plan.body.waves.map((w: WaveView) => w.devices.length)).toEqual([1, 2]);
  const created = await server.request("POST", "/api/v1/rollouts", { token: owner.token, body });
  expect(created.status, created.text).toBe(200);
  expect(waveIds(created.body)).toEqual(waveIds(plan.body));
  const [[first], rest] = waveIds(plan.body) as [[string], string[]];
  return { id: created.body.id as string, first, rest };
}

/** The rollout once `done` holds of it (polling the API). */
function rolloutWhen(id: string, what: string, done: (rollout: any) => boolean, ms?: number) {
  let last: unknown;
  return until(
    `the rollout ${what}`,
    async () => {
      const reply = await server.request("GET", `/api/v1/rollouts/${id}`, { token: owner.token });
      expect(reply.status, reply.text).toBe(200);
      last = reply.body;
      return done(reply.body) ? reply.body : undefined;
    },
    ms,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; last seen: ${JSON.stringify(last)}`);
  });
}

/** The device's view once it reports running `snapshotId`. */
const runningIt = (id: string, snapshotId: string) =>
  until(`the device ${id} reporting ${snapshotId} running`, async () => {
    const seen = await server.request("GET", `/api/v1/devices/${id}`, { token: owner.token });
    return seen.body.activeSnapshot?.id === snapshotId && seen.body.status === "running"
      ? seen.body
      : undefined;
  });

const groupTarget = async () => {
  const group = await server.request(
    "GET",
    `/api/v1/applications/${applicationId}/device-groups/${groupId}`,
    { token: owner.token },
  );
  return group.body.targetSnapshot?.id as string | undefined;
};

/**
 * A rollout of `label`'s flow with a function `name` running `func` once at start, whose first
 * device fails: the rollout is rolled back with that device's reason, the device runs v2 again,
 * the others never left it (their Node-RED not restarted).
 */
async function rolledBackAtFirstWave(label: string, name: string, func: string, reason: RegExp) {
  const started = Date.now();
  const snapshotId = await snapshotOf(label, onceAtStart(name, func));
  const startsBefore = new Map(devices.map((d) => [d.id, starts(d.agent)]));
  const { id, first, rest } = await rollOut(snapshotId, { soakSeconds: 30 });
  const ended = await rolloutWhen(id, "rolled back", (r) => r.state === "rolled_back", 150_000);
  expect(ended.reason).toMatch(/1 device failed/);
  const [failed] = ended.waves[0].devices;
  expect(failed).toMatchObject({ id: first, state: "rolled_back" });
  expect(failed.reason).toMatch(reason);
  console.log(`${failed.id}: ${failed.reason}`);
  for (const other of ended.waves[1].devices) expect(other.state).toBe("pending");
  // The failed device runs its previous snapshot again, and says so.
  expect(await helloOf(agentOf(first), "v2", 90_000)).toMatchObject({ snapshot: v2 });
  await runningIt(first, v2);
  // The others never changed: the same flow, Node-RED never restarted.
  for (const other of rest) {
    expect(await helloNow(agentOf(other))).toBe("v2");
    expect(starts(agentOf(other))).toBe(startsBefore.get(other));
  }
  expect(await groupTarget()).toBe(v2);
  console.log(`the rollout of ${label} took ${Math.round((Date.now() - started) / 1000)} s`);
  return agentOf(first);
}

describe.skipIf(!agentPackage)(
  agentPackage
    ? "rollouts to real device agents"
    : "rollouts to real device agents (skipped: no device agent package; set DEVICE_AGENT_TGZ)",
  () => {
    beforeAll(async () => {
      const started = Date.now();
      // The health tab in the device's flows posts to the base URL: where the server listens.
      const port = await freePort();
      let cache: string;
      [server, cache] = await Promise.all([
        startServer({ port, baseUrl: `http://127.0.0.1:${port}` }),
        agents.moduleCache({ "node-red": DEVICE_NODE_RED }),
        agents.install(),
      ]);
      owner = await makeUser(server);
      const team = await createTeam(server, owner);
      instanceId = await createInstance(server, owner, team.id);
      const instance = await server.request("GET", `/api/v1/projects/${instanceId}`, {
        token: owner.token,
      });
      applicationId = instance.body.application.id;
      v1 = await snapshotOf("v1");
      v2 = await snapshotOf("v2");
      const group = await server.request(
        "POST",
        `/api/v1/applications/${applicationId}/device-groups`,
        { token: owner.token, body: { name: "line" } },
      );
      expect(group.status, group.text).toBe(201);
      groupId = group.body.id;
      const ids: string[] = [];
      for (const name of ["line-a", "line-b", "line-c"]) {
        const created = await server.request("POST", "/api/v1/devices", {
          token: owner.token,
          body: { name, type: "Raspberry Pi", team: team.id, application: applicationId },
        });
        expect(created.status, created.text).toBe(200);
        ids.push(created.body.id);
        const config = {
          deviceId: created.body.id,
          token: created.body.credentials.token,
          credentialSecret: created.body.credentials.credentialSecret,
          forgeURL: server.url,
          intervalJitter: 1,
        };
        const agent = await agents.startCached(config, cache);
        devices.push({ id: created.body.id, name, agent });
      }
      const groupPath = `/api/v1/applications/${applicationId}/device-groups/${groupId}`;
      const added = await server.request("PATCH", groupPath, {
        token: owner.token,
        body: { add: ids },
      });
      expect(added.status, added.text).toBe(200);
      const target = await server.request("PUT", groupPath, {
        token: owner.token,
        body: { targetSnapshotId: v1 },
      });
      expect(target.status, target.text).toBe(200);
      // Each agent links the module cache and runs the group's target, all at once.
      await Promise.all(devices.map((d) => helloOf(d.agent, "v1", 200_000)));
      await Promise.all(devices.map((d) => runningIt(d.id, v1)));
      console.log(`three devices run v1 after ${Math.round((Date.now() - started) / 1000)} s`);
    }, 300_000);

    afterAll(async () => {
      await agents.close();
      await server?.close();
    }, 60_000);

    test("a good snapshot rolls out wave by wave, one device then the rest, and becomes the group's target", async () => {
      const started = Date.now();
      const { id, first, rest } = await rollOut(v2, { soakSeconds: 3 });
      // The first wave soaks: its device runs v2, the others still v1 and are told nothing.
      const soaking = await rolloutWhen(
        id,
        "soaking its first device",
        (r) => !["pending", "deploying"].includes(r.waves[0].devices[0].state),
        120_000,
      );
      expect(soaking.waves[0].devices[0]).toMatchObject({ id: first, state: "soaking" });
      for (const other of rest) expect(await helloNow(agentOf(other))).toBe("v1");
      const now = await server.request("GET", `/api/v1/rollouts/${id}`, { token: owner.token });
      expect(now.body.waves[1].devices.map((d: { state: string }) => d.state)).toEqual([
        "pending",
        "pending",
      ]);
      expect(await helloOf(agentOf(first), "v2", 10_000)).toMatchObject({ snapshot: v2 });

      const done = await rolloutWhen(id, "succeeded", (r) => r.state !== "running", 150_000);
      expect(done.state, JSON.stringify(done)).toBe("succeeded");
      for (const device of done.waves.flatMap((w: WaveView) => w.devices)) {
        expect(device.state).toBe("healthy");
      }
      for (const device of devices) {
        expect(await helloOf(device.agent, "v2", 10_000)).toMatchObject({ snapshot: v2 });
      }
      expect(await groupTarget()).toBe(v2);
      // Each reports running it.
      for (const device of devices) await runningIt(device.id, v2);
      console.log(`the good rollout took ${Math.round((Date.now() - started) / 1000)} s`);
    }, 240_000);

    test("a snapshot whose flow throws stops at the first wave; that device runs its previous snapshot again, the others never changed", async () => {
      await rolledBackAtFirstWave(
        "v3-throws",
        "thrower",
        'throw new Error("boom on every message");',
        /uncaught error: Error: boom on every message \(function node "thrower"\)/,
      );
    }, 240_000);

    test("a snapshot that crashes Node-RED is rolled back the same way", async () => {
      // An unhandled rejection: Node-RED's red.js exits, the agent starts it again, and the flows
      // report a second start (or the agent gives up on the loop and reports `crashed`).
      const agent = await rolledBackAtFirstWave(
        "v4-crashes",
        "crasher",
        'Promise.reject(new Error("crash"));\nreturn null;',
        /restarted|crashed/,
      );
      expect(agent.output.join("")).toMatch(/Node-RED stopped unexpectedly|restart loop detected/);
    }, 240_000);
  },
);

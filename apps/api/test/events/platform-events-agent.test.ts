// The platform's events of real processes (issue 39): the real FlowFuse device agent (4.2.1,
// support/device-agent.ts) on the embedded broker is `device.online` when its MQTT session begins,
// `device.offline` when it stops (its session closed), online again when it starts anew, each once;
// and a hosted Node-RED killed is `project.crashed` with what the runtime says of why, then
// `project.recovered` once started again. A machine without the agent's package skips the device's
// part (CI fails instead).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentPackage, DeviceAgents, type Agent } from "../support/device-agent";
import { startServer, type TestServer } from "../support/harness";
import { nodeRedPid } from "../support/node-red-process";
import {
  createApplication,
  createInstance,
  createTeam,
  makeUser,
  type TestTeam,
  type TestUser,
} from "../support/team-fixtures";
import { waiter } from "../support/until";
import { platformEvents } from "../support/platform-events";

const until = waiter(90_000, 250);

describe.skipIf(!agentPackage)("the real device agent's presence", () => {
  const agents = new DeviceAgents();
  let server: TestServer;
  let owner: TestUser;
  let team: TestTeam;

  beforeAll(async () => {
    await agents.install();
    server = await startServer({ broker: "embedded", instances: "in-memory" });
    owner = await makeUser(server);
    team = await createTeam(server, owner);
  }, 240_000);

  afterAll(async () => {
    await agents.close();
    await server?.close();
  });

  it("is online while its agent holds its session, offline once it stops, each once", async () => {
    const applicationId = await createApplication(server, owner, team.id);
    const created = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: "presence", type: "Raspberry Pi", team: team.id, application: applicationId },
    });
    expect(created.status, created.text).toBe(200);
    const { id, credentials } = created.body;
    const config = {
      deviceId: id,
      token: credentials.token,
      credentialSecret: credentials.credentialSecret,
      forgeURL: server.url,
      brokerURL: credentials.broker.url,
      brokerUsername: credentials.broker.username,
      brokerPassword: credentials.broker.password,
    };
    const types = ["device.online", "device.offline"];
    const seen = (count: number, what: string) =>
      until(what, async () => {
        const events = await platformEvents(server, team.id, types, id);
        return events.length >= count ? events : undefined;
      });
    const view = async () =>
      (await server.request("GET", `/api/v1/devices/${id}`, { token: owner.token })).body;

    // Polling every five minutes: only its MQTT session can tell the platform it is there.
    let agent: Agent = await agents.start(config, { interval: 300 });
    await seen(1, "the agent online");
    expect((await view()).onlineStatus).toBe("online");
    await agents.stop(agent);
    await seen(2, "the agent offline");
    expect((await view()).onlineStatus).toBe("offline");
    agent = await agents.start({ dir: agent.dir }, { interval: 300 });
    const events = await seen(3, "the agent online again");
    expect(events.map((event) => [event.type, event.data])).toEqual(
      ["device.online", "device.offline", "device.online"].map((type) => [
        type,
        { device: { id, name: "presence" } },
      ]),
    );
    expect(events.every((event) => event.entityType === "device" && event.teamId === team.id)).toBe(
      true,
    );
    expect(await platformEvents(server, team.id, types, id)).toHaveLength(3);
    await agents.stop(agent);
  }, 240_000);
});

describe("a hosted Node-RED that dies", () => {
  let server: TestServer;
  let owner: TestUser;
  let team: TestTeam;

  beforeAll(async () => {
    server = await startServer({ instances: true });
    owner = await makeUser(server);
    team = await createTeam(server, owner);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  const stateOf = async (id: string) =>
    (await server.request("GET", `/api/v1/projects/${id}`, { token: owner.token })).body;

  it("is told crashed with why, then recovered once started again", async () => {
    const id = await createInstance(server, owner, team.id);
    const { name } = await until("the instance running", async () => {
      const view = await stateOf(id);
      return view.meta.state === "running" ? view : undefined;
    });
    const types = ["project.crashed", "project.recovered"];
    expect(await platformEvents(server, team.id, types, id)).toEqual([]);
    process.kill(await nodeRedPid(id), "SIGKILL");
    await until("the crash told", async () =>
      (await platformEvents(server, team.id, types, id)).length === 1 ? true : undefined,
    );
    const started = await server.request("POST", `/api/v1/projects/${id}/actions/start`, {
      token: owner.token,
    });
    expect(started.status, started.text).toBe(200);
    const events = await until("the recovery told", async () => {
      const seen = await platformEvents(server, team.id, types, id);
      return seen.length === 2 ? seen : undefined;
    });
    expect(events.map((event) => [event.type, event.entityType, event.data])).toEqual([
      ["project.crashed", "project", { project: { id, name }, reason: "killed by SIGKILL" }],
      ["project.recovered", "project", { project: { id, name } }],
    ]);
    expect(events.every((event) => event.teamId === team.id && event.entityId === id)).toBe(true);
  }, 300_000);
});

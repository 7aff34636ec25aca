// A snapshot of a device connected on the channel is what the device reports (the agent's `upload`,
// answered by support/simulated-agent.ts): its flows, its credentials (sent encrypted with the
// device's credentialSecret, stored sealed, exported under the caller's secret) and its package's
// modules; for an application's device and for an instance's. A device not connected keeps to what
// the platform knows it runs. The real agent does the same in device-agent-live.test.ts.
import { decryptCredentials, encryptCredentials } from "@flowplane/auth";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startServer, type TestServer } from "../support/harness";
import { SimulatedAgent } from "../support/simulated-agent";
import {
  createApplication,
  createInstance,
  createTeam,
  makeUser,
  type TestTeam,
  type TestUser,
} from "../support/team-fixtures";

let server: TestServer;
let owner: TestUser;
let team: TestTeam;
let instanceId: string;
let applicationId: string;
const agents: SimulatedAgent[] = [];

beforeAll(async () => {
  server = await startServer({ broker: "embedded", instances: "in-memory" });
  owner = await makeUser(server);
  team = await createTeam(server, owner);
  instanceId = await createInstance(server, owner, team.id);
  applicationId = await createApplication(server, owner, team.id);
});
afterAll(async () => {
  for (const agent of agents) await agent.end().catch(() => {});
  await server.close();
});

let counter = 0;
async function device(owned: { application: string } | { instance: string }) {
  const reply = await server.request("POST", "/api/v1/devices", {
    token: owner.token,
    body: { name: `uploading-${++counter}`, team: team.id, ...owned },
  });
  expect(reply.status, reply.text).toBe(200);
  return { id: reply.body.id as string, credentials: reply.body.credentials };
}

/** What the agent's `upload` answers: flows, credentials encrypted with `secret`, its package. */
const upload = (label: string, secret: string) => ({
  state: { state: "running", agentVersion: "4.2.1" },
  flows: [
    { id: "t1", type: "tab", label },
    { id: "n1", type: "mqtt-broker", broker: "127.0.0.1" },
  ],
  credentials: encryptCredentials(secret, { n1: { user: `user-of-${label}` } }),
  package: {
    name: "device",
    version: "0.0.1",
    description: "",
    modules: { "node-red": "4.0.9", "node-red-contrib-example": "1.2.3" },
  },
});

/** A device connected on the channel whose agent answers `upload` with `label`'s content. */
async function connected(owned: { application: string } | { instance: string }, label: string) {
  const { id, credentials } = await device(owned);
  const agent = await SimulatedAgent.connect(credentials.broker);
  agents.push(agent);
  agent.answers.upload = upload(label, credentials.credentialSecret);
  return { id, agent };
}

/** The snapshot's flows and its credentials, exported under a secret of the caller's. */
async function contentOf(snapshotId: string) {
  const exported = await server.request("POST", `/api/v1/snapshots/${snapshotId}/export`, {
    token: owner.token,
    body: { credentialSecret: "the caller's" },
  });
  expect(exported.status, exported.text).toBe(200);
  return {
    flows: exported.body.flows.flows,
    credentials: decryptCredentials("the caller's", exported.body.flows.credentials),
    modules: exported.body.settings.modules,
  };
}

describe("a snapshot from a connected device", () => {
  test("an application's device: its flows, credentials and modules as it reports them", async () => {
    const { id, agent } = await connected({ application: applicationId }, "edited-on-the-device");
    const reply = await server.request("POST", `/api/v1/devices/${id}/snapshots`, {
      token: owner.token,
      body: { name: "from the device" },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      name: "from the device",
      ownerType: "device",
      device: { id },
      modules: { "node-red": "4.0.9", "node-red-contrib-example": "1.2.3" },
    });
    expect(agent.commands.map((c) => c.command)).toContain("upload");
    const content = await contentOf(reply.body.id);
    expect(content.flows).toEqual(upload("edited-on-the-device", "x").flows);
    expect(content.credentials).toEqual({ n1: { user: "user-of-edited-on-the-device" } });
  });

  test("an instance's device: the snapshot is the instance's, of what the device reports", async () => {
    const { id } = await connected({ instance: instanceId }, "instance-device");
    const reply = await server.request("POST", `/api/v1/devices/${id}/snapshot`, {
      token: owner.token,
      body: { name: "of the instance's device" },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ ownerType: "instance", projectId: instanceId });
    const content = await contentOf(reply.body.id);
    expect(content.flows[0]).toMatchObject({ label: "instance-device" });
    expect(content.credentials).toEqual({ n1: { user: "user-of-instance-device" } });
  });

  test("credentials the device's secret does not open: 400 invalid_state, nothing stored", async () => {
    const { id, agent } = await connected({ application: applicationId }, "wrong");
    agent.answers.upload = upload("wrong", "another secret");
    const reply = await server.request("POST", `/api/v1/devices/${id}/snapshots`, {
      token: owner.token,
      body: { name: "unreadable" },
    });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe("invalid_state");
    const list = await server.request("GET", `/api/v1/devices/${id}/snapshots`, {
      token: owner.token,
    });
    expect(list.body.snapshots).toEqual([]);
  });

  test("a device not connected keeps to what the platform knows: running nothing, 400 invalid_state", async () => {
    const { id } = await device({ application: applicationId });
    const reply = await server.request("POST", `/api/v1/devices/${id}/snapshots`, {
      token: owner.token,
      body: { name: "of nothing" },
    });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe("invalid_state");
  });
});

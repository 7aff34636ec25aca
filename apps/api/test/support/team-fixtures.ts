// Teams and what is in them, made through the API as their owners would, for the tests that walk
// every operation against real resources (isolation.test.ts, roles.test.ts).
import { rolloutHealthToken } from "@flowplane/auth";
import {
  DEFAULT_PROJECT_TYPE_ID,
  DEFAULT_STACK_ID,
  DEFAULT_TEAM_TYPE_ID,
  DEFAULT_TEMPLATE_ID,
  recordEvent,
  enqueueDeliveries,
} from "@flowplane/db";
import { expect } from "vitest";
import { type TestServer, TOKEN_SECRET } from "./harness";
import { waiter } from "./until";
import type { DocumentOperation, SchemaWalker } from "./walk";

export interface TestUser {
  id: string;
  token: string;
  tokenId: string;
  username: string;
}

export interface TestTeam {
  id: string;
  name: string;
  slug: string;
}

let counter = 0;
const unique = (prefix: string) =>
  `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

/** A user with a token (see `TestServer.user`), and their username. */
export async function makeUser(
  server: TestServer,
  options: Parameters<TestServer["user"]>[0] = {},
): Promise<TestUser> {
  const username = options.username ?? unique("user");
  return { ...(await server.user({ ...options, username })), username };
}

/** A team created by `owner` through the API (so the owner is its first member). */
export async function createTeam(server: TestServer, owner: TestUser): Promise<TestTeam> {
  const name = unique("Team");
  const body: Record<string, unknown> = { name, slug: name.toLowerCase() };
  const schema = (server.document.paths["/api/v1/teams"] as any)?.post?.requestBody?.content?.[
    "application/json"
  ]?.schema;
  // Team types are platform-wide; the seeded one always exists.
  if (JSON.stringify(schema ?? {}).includes('"type"')) body.type = DEFAULT_TEAM_TYPE_ID;
  const reply = await server.request("POST", "/api/v1/teams", { token: owner.token, body });
  expect(reply.status, `creating a team: ${reply.text}`).toBeLessThan(300);
  return { id: reply.body.id, name: reply.body.name, slug: reply.body.slug };
}

/** A second token of `user`'s, created through the API; its id. */
export async function createToken(server: TestServer, user: TestUser): Promise<string> {
  const reply = await server.request("POST", "/api/v1/user/tokens", {
    token: user.token,
    body: { name: unique("token") },
  });
  expect(reply.status, `creating a token: ${reply.text}`).toBe(200);
  return reply.body.id;
}

/** An invitation to `invitee` sent by the team's owner through the API; its id. */
export async function createInvitation(
  server: TestServer,
  owner: TestUser,
  teamId: string,
  invitee: TestUser,
): Promise<string> {
  const path = `/api/v1/teams/${teamId}/invitations`;
  const sent = await server.request("POST", path, {
    token: owner.token,
    body: { user: invitee.username, role: 30 },
  });
  expect(sent.status, `POST ${path}: ${sent.text}`).toBe(200);
  expect(sent.body, `POST ${path}`).toEqual({ status: "okay" });
  // Its id from the database: the invitations list is another operation, walked on its own.
  const row = await (server.db as any)
    .selectFrom("invitations")
    .select("id")
    .where("team_id", "=", teamId)
    .where("invitee_id", "=", invitee.id)
    .executeTakeFirst();
  expect(row, `POST ${path} stored an invitation to ${invitee.username}`).toBeDefined();
  return row.id;
}

/** Body fields that name something by id: their names end in `Id`/`Ids`, or are listed here. */
export const ID_LIKE_FIELD = /^ids?$|Ids?$/;
export const ID_FIELDS_BY_NAME = new Set([
  "defaultTeam",
  "targetSnapshot",
  "snapshot",
  // FlowFuse's names in device bodies.
  "team",
  "application",
  "instance",
  // A device group's members.
  "add",
  "remove",
  "set",
  // A bulk request's devices and the group they move to.
  "devices",
  "deviceGroup",
]);
export const isIdField = (field: string) =>
  ID_LIKE_FIELD.test(field) || ID_FIELDS_BY_NAME.has(field);

/** Path parameters that name a platform-wide resource (no team's): the walks use these ids. */
/** A client of the team's broker, created by its owner through the API; its username. */
export async function createBrokerClient(
  server: TestServer,
  owner: { token: string },
  teamId: string,
): Promise<string> {
  const username = unique("client");
  const path = `/api/v1/teams/${teamId}/broker/client`;
  const reply = await server.request("POST", path, {
    token: owner.token,
    body: { username, password: "walked-client-secret", acls: [{ action: "both", pattern: "#" }] },
  });
  expect(reply.status, `POST ${path}: ${reply.text}`).toBe(201);
  return username;
}

/** An application of the team, created by its owner through the API; its id. */
export async function createApplication(
  server: TestServer,
  owner: { token: string },
  teamId: string,
): Promise<string> {
  const reply = await server.request("POST", "/api/v1/applications", {
    token: owner.token,
    body: { name: unique("App"), teamId },
  });
  expect(reply.status, `POST /api/v1/applications: ${reply.text}`).toBe(200);
  return reply.body.id;
}

/** An instance in a new application of the team, created by its owner through the API; its id. */
export async function createInstance(
  server: TestServer,
  owner: { token: string },
  teamId: string,
): Promise<string> {
  const applicationId = await createApplication(server, owner, teamId);
  const reply = await server.request("POST", "/api/v1/projects", {
    token: owner.token,
    body: { name: unique("inst"), applicationId },
  });
  expect(reply.status, `POST /api/v1/projects: ${reply.text}`).toBe(200);
  return reply.body.id;
}

/** A snapshot of the instance, taken by a member or owner through the API; its id. */
export async function createSnapshot(
  server: TestServer,
  owner: { token: string },
  instanceId: string,
): Promise<string> {
  const path = `/api/v1/projects/${instanceId}/snapshots`;
  const reply = await server.request("POST", path, {
    token: owner.token,
    body: { name: unique("snapshot") },
  });
  expect(reply.status, `POST ${path}: ${reply.text}`).toBe(200);
  return reply.body.id;
}

/** A pipeline of two stages, each an instance of one application, made by the team's owner. */
export interface PipelineFixture {
  applicationId: string;
  pipelineId: string;
  /** The first stage (a deploy from it goes to the second) and the last. */
  stageId: string;
  lastStageId: string;
  instanceIds: [string, string];
}

export async function createPipeline(
  server: TestServer,
  owner: { token: string },
  teamId: string,
): Promise<PipelineFixture> {
  const applicationId = await createApplication(server, owner, teamId);
  const instanceIds: string[] = [];
  for (let i = 0; i < 2; i++) {
    const reply = await server.request("POST", "/api/v1/projects", {
      token: owner.token,
      body: { name: unique("stage"), applicationId },
    });
    expect(reply.status, `POST /api/v1/projects: ${reply.text}`).toBe(200);
    instanceIds.push(reply.body.id);
  }
  const created = await server.request("POST", "/api/v1/pipelines", {
    token: owner.token,
    body: { applicationId, name: unique("pipeline") },
  });
  expect(created.status, `POST /api/v1/pipelines: ${created.text}`).toBe(200);
  const pipelineId: string = created.body.id;
  const stages: string[] = [];
  for (const instanceId of instanceIds) {
    const path = `/api/v1/pipelines/${pipelineId}/stages`;
    const reply = await server.request("POST", path, {
      token: owner.token,
      body: {
        name: unique("stage"),
        instanceId,
        ...(stages.length > 0 && { source: stages.at(-1) }),
      },
    });
    expect(reply.status, `POST ${path}: ${reply.text}`).toBe(200);
    stages.push(reply.body.id);
  }
  return {
    applicationId,
    pipelineId,
    stageId: stages[0]!,
    lastStageId: stages[1]!,
    instanceIds: instanceIds as [string, string],
  };
}

/** A deploy of the pipeline's first stage, awaited until it is done; its operation's id. */
export async function createOperation(
  server: TestServer,
  owner: { token: string },
  pipeline: PipelineFixture,
): Promise<string> {
  const path = `/api/v1/pipelines/${pipeline.pipelineId}/stages/${pipeline.stageId}/deploy`;
  const reply = await server.request("PUT", path, { token: owner.token, body: {} });
  expect(reply.status, `PUT ${path}: ${reply.text}`).toBe(200);
  const id: string = reply.body.operation.id;
  await awaitOperation(server, owner, id);
  return id;
}

/** The operation once it is no longer pending (a deploy runs in the background). */
export async function awaitOperation(
  server: TestServer,
  caller: { token: string },
  operationId: string,
  ms = 60_000,
): Promise<{ status: string; error: { code: string; error: string } | null }> {
  const deadline = Date.now() + ms;
  for (;;) {
    const reply = await server.request("GET", `/api/v1/operations/${operationId}`, {
      token: caller.token,
    });
    expect(reply.status, reply.text).toBe(200);
    if (reply.body.status !== "pending") return reply.body;
    if (Date.now() > deadline) throw new Error(`operation ${operationId} still pending`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const GLOBAL_PATH_PARAMS: Record<string, () => string> = {
  teamTypeId: () => DEFAULT_TEAM_TYPE_ID,
  // The seeded catalogue: the walks that use these never delete as an administrator.
  instanceTypeId: () => DEFAULT_PROJECT_TYPE_ID,
  stackId: () => DEFAULT_STACK_ID,
  templateId: () => DEFAULT_TEMPLATE_ID,
};

/**
 * Required query parameters that name something: the walks send these values, and make what they
 * name first where an operation needs it (`createLibraryEntry`).
 */
export const VALID_QUERY_VALUES: Record<string, string> = {
  type: "flows",
  path: "walked/entry",
  instanceType: "hosted",
};

/** The team library entry VALID_QUERY_VALUES names, saved by the team's owner through the API. */
export async function createLibraryEntry(
  server: TestServer,
  owner: { token: string },
  teamId: string,
): Promise<void> {
  const path = `/api/v1/teams/${teamId}/library/entry`;
  const reply = await server.request("PUT", path, {
    token: owner.token,
    body: { type: VALID_QUERY_VALUES.type, path: VALID_QUERY_VALUES.path, body: "[]" },
  });
  expect(reply.status, `PUT ${path}: ${reply.text}`).toBe(200);
}

/** Query parameters the walks send: the required ones, with valid values. */
export function requiredQuery(
  operation: DocumentOperation,
  example: (schema: object, where: string) => unknown,
  /** The team a `team` parameter (the search's) names. */
  teamId?: string,
): string {
  const query = (operation.operation.parameters ?? [])
    .filter((p) => p.in === "query" && p.required)
    .map((p) => {
      const value =
        (p.name === "team" ? teamId : undefined) ??
        VALID_QUERY_VALUES[p.name] ??
        String(example(p.schema ?? {}, p.name));
      return `${p.name}=${encodeURIComponent(value)}`;
    });
  return query.length > 0 ? `?${query.join("&")}` : "";
}

/**
 * Body fields whose schema alone does not give a value the handler takes (a role is any integer
 * in the schema, so that a wrong one is the API's own 400 `invalid_team_role`).
 */
export const VALID_FIELD_VALUES: Record<string, unknown> = { role: 30 };

/** Groups of optional body fields of which exactly one is required: the first is given. */
export const ONE_OF_REQUIRED: string[][] = [["instanceId", "deviceGroupId", "deviceId"]];

/** A valid body for the operation: required fields from the schema, known fields made valid. */
export function validBody(
  walker: SchemaWalker,
  operation: DocumentOperation,
): Record<string, unknown> | undefined {
  const schema = walker.bodySchema(operation.operation);
  // A DELETE has a body only where the document gives it one (a bulk deletion).
  if (!schema || !["POST", "PUT", "PATCH", "DELETE"].includes(operation.method)) return undefined;
  const body = walker.example(schema, `${operation.name} body`) as Record<string, unknown>;
  for (const [field, value] of Object.entries(VALID_FIELD_VALUES)) {
    if (field in body) body[field] = value;
  }
  // One of these optional fields is required (a pipeline stage's target): the walks give the
  // first, which they fill with their own id like any other.
  const properties = (schema as { properties?: Record<string, object> }).properties ?? {};
  for (const oneOf of ONE_OF_REQUIRED) {
    if (oneOf.every((f) => f in properties) && !oneOf.some((f) => f in body)) {
      body[oneOf[0]!] = walker.example(properties[oneOf[0]!]!, `${operation.name} ${oneOf[0]}`);
    }
  }
  return body;
}

/** A device of the team, created by its owner through the API; its id. */
export async function createDevice(
  server: TestServer,
  owner: { token: string },
  teamId: string,
): Promise<string> {
  const reply = await server.request("POST", "/api/v1/devices", {
    token: owner.token,
    body: { name: unique("device"), team: teamId },
  });
  expect(reply.status, `POST /api/v1/devices: ${reply.text}`).toBe(200);
  return reply.body.id;
}

/** A provisioning token of the team, created by its owner through the API; its id. */
export async function createProvisioningToken(
  server: TestServer,
  owner: { token: string },
  teamId: string,
): Promise<string> {
  const path = `/api/v1/teams/${teamId}/devices/provisioning`;
  const reply = await server.request("POST", path, {
    token: owner.token,
    body: { name: unique("provisioning") },
  });
  expect(reply.status, `POST ${path}: ${reply.text}`).toBe(200);
  return reply.body.id;
}

/** A device group of a new application of the team, with one of its devices; ids of both. */
export async function createDeviceGroup(
  server: TestServer,
  owner: { token: string },
  teamId: string,
): Promise<{ applicationId: string; groupId: string; deviceId: string }> {
  const applicationId = await createApplication(server, owner, teamId);
  const path = `/api/v1/applications/${applicationId}/device-groups`;
  const reply = await server.request("POST", path, {
    token: owner.token,
    body: { name: unique("group") },
  });
  expect(reply.status, `POST ${path}: ${reply.text}`).toBe(201);
  const device = await server.request("POST", "/api/v1/devices", {
    token: owner.token,
    body: { name: unique("member"), team: teamId, application: applicationId },
  });
  expect(device.status, device.text).toBe(200);
  return { applicationId, groupId: reply.body.id, deviceId: device.body.id };
}

/** A device that runs what it was given, and what it runs. */
export interface RunningDevice {
  deviceId: string;
  /** The device's own token, for its live routes. */
  deviceToken: string;
  instanceId: string;
  applicationId: string;
  /** The snapshot it runs (one of the instance's). */
  snapshotId: string;
}

/**
 * A device of a new instance's application (or, with `of: "instance"`, of the instance) whose
 * target is a snapshot of the instance, and which has checked in running it with its settings, as
 * the agent does once it has deployed them: what a snapshot of a device is taken from.
 */
export async function createRunningDevice(
  server: TestServer,
  owner: { token: string },
  teamId: string,
  options: { of?: "application" | "instance"; snapshot?: Record<string, unknown> } = {},
): Promise<RunningDevice> {
  const of = options.of ?? "application";
  const instanceId = await createInstance(server, owner, teamId);
  const instance = await server.request("GET", `/api/v1/projects/${instanceId}`, {
    token: owner.token,
  });
  const applicationId = instance.body.application.id as string;
  const created = await server.request("POST", "/api/v1/devices", {
    token: owner.token,
    body: {
      name: unique("running"),
      team: teamId,
      ...(of === "instance" ? { instance: instanceId } : { application: applicationId }),
    },
  });
  expect(created.status, `POST /api/v1/devices: ${created.text}`).toBe(200);
  const deviceId = created.body.id as string;
  const deviceToken = created.body.credentials.token as string;
  let snapshotId: string;
  if (options.snapshot) {
    const taken = await server.request("POST", `/api/v1/projects/${instanceId}/snapshots`, {
      token: owner.token,
      body: { name: unique("snapshot"), ...options.snapshot },
    });
    expect(taken.status, taken.text).toBe(200);
    snapshotId = taken.body.id;
  } else {
    snapshotId = await createSnapshot(server, owner, instanceId);
  }
  const set = await server.request("PUT", `/api/v1/devices/${deviceId}`, {
    token: owner.token,
    body: { targetSnapshot: snapshotId },
  });
  expect(set.status, set.text).toBe(200);
  const checkIn = async (settings: string | null) => {
    const response = await fetch(`${server.url}/api/v1/devices/${deviceId}/live/state`, {
      method: "POST",
      headers: { authorization: `Bearer ${deviceToken}`, "content-type": "application/json" },
      body: JSON.stringify({
        state: "running",
        project: of === "instance" ? instanceId : null,
        application: of === "instance" ? null : applicationId,
        snapshot: snapshotId,
        settings,
        agentVersion: "4.2.1",
        nodeRedVersion: "4.1.15",
      }),
    });
    return { status: response.status, body: (await response.json()) as { settings: string } };
  };
  // The first check-in names the settings hash it should run; the second runs it.
  const first = await checkIn(null);
  expect(first.status).toBe(409);
  const second = await checkIn(first.body.settings);
  expect(second.status, JSON.stringify(second.body)).toBe(200);
  return { deviceId, deviceToken, instanceId, applicationId, snapshotId };
}

/** A snapshot of what an application's running device runs, taken by its owner; its id. */
export async function createDeviceSnapshot(
  server: TestServer,
  owner: { token: string },
  deviceId: string,
): Promise<string> {
  const path = `/api/v1/devices/${deviceId}/snapshots`;
  const reply = await server.request("POST", path, {
    token: owner.token,
    body: { name: unique("device snapshot") },
  });
  expect(reply.status, `POST ${path}: ${reply.text}`).toBe(200);
  return reply.body.id;
}

/** What a rollout can go to: a group of `count` devices of a new instance's application, and a snapshot of the instance. */
export async function rolloutTarget(
  server: TestServer,
  owner: { token: string },
  teamId: string,
  count = 1,
): Promise<{
  applicationId: string;
  groupId: string;
  snapshotId: string;
  devices: { id: string; token: string }[];
}> {
  const instanceId = await createInstance(server, owner, teamId);
  const instance = await server.request("GET", `/api/v1/projects/${instanceId}`, {
    token: owner.token,
  });
  const applicationId = instance.body.application.id as string;
  const snapshotId = await createSnapshot(server, owner, instanceId);
  const groups = `/api/v1/applications/${applicationId}/device-groups`;
  const group = await server.request("POST", groups, {
    token: owner.token,
    body: { name: unique("rollout group") },
  });
  expect(group.status, `POST ${groups}: ${group.text}`).toBe(201);
  const devices: { id: string; token: string }[] = [];
  for (let i = 0; i < count; i++) {
    const device = await server.request("POST", "/api/v1/devices", {
      token: owner.token,
      body: { name: unique("rollout device"), team: teamId, application: applicationId },
    });
    expect(device.status, device.text).toBe(200);
    devices.push({ id: device.body.id, token: device.body.credentials.token });
  }
  const added = await server.request("PATCH", `${groups}/${group.body.id}`, {
    token: owner.token,
    body: { add: devices.map((d) => d.id) },
  });
  expect(added.status, added.text).toBe(200);
  return { applicationId, groupId: group.body.id, snapshotId, devices };
}

/** The rollout once `done` says so (the runner moves it on in the background). */
export async function rolloutWhen(
  server: TestServer,
  caller: { token: string },
  rolloutId: string,
  done: (rollout: any) => boolean,
): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const reply = await server.request("GET", `/api/v1/rollouts/${rolloutId}`, {
      token: caller.token,
    });
    expect(reply.status, reply.text).toBe(200);
    if (done(reply.body)) return reply.body;
    if (Date.now() > deadline) throw new Error(`rollout ${rolloutId}: ${reply.text}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A rollout under way, started by the team's owner through the API: a snapshot of a new instance
 * to a group of one device of its application, which never checks in (it stays `deploying`: the
 * report timeout is a day; the first wave is deployed before this answers); its id and what it
 * was made of.
 */
export async function createRollout(
  server: TestServer,
  owner: { token: string },
  teamId: string,
): Promise<{ rolloutId: string; applicationId: string; groupId: string; snapshotId: string }> {
  const target = await rolloutTarget(server, owner, teamId);
  const created = await server.request("POST", "/api/v1/rollouts", {
    token: owner.token,
    body: {
      snapshotId: target.snapshotId,
      deviceGroupId: target.groupId,
      waves: [{ count: 1 }],
      reportTimeoutSeconds: 86_400,
    },
  });
  expect(created.status, `POST /api/v1/rollouts: ${created.text}`).toBe(200);
  const rolloutId = created.body.id as string;
  await rolloutWhen(server, owner, rolloutId, (r) => r.waves[0].devices[0].state === "deploying");
  return { rolloutId, ...target };
}

/**
 * A rollout that waits for an owner's approval of its second wave: its first wave's device
 * reported running the snapshot and its flows' start (as the agent and the health tab do).
 */
export async function rolloutWaitingApproval(
  server: TestServer,
  owner: { token: string },
  teamId: string,
): Promise<string> {
  const target = await rolloutTarget(server, owner, teamId, 2);
  const created = await server.request("POST", "/api/v1/rollouts", {
    token: owner.token,
    body: {
      snapshotId: target.snapshotId,
      deviceGroupId: target.groupId,
      waves: [{ count: 1 }, { count: 1 }],
      soakSeconds: 0,
      requireApproval: true,
    },
  });
  expect(created.status, `POST /api/v1/rollouts: ${created.text}`).toBe(200);
  const rolloutId = created.body.id as string;
  const first = target.devices.find((d) => d.id === created.body.waves[0].devices[0].id)!;
  await rolloutWhen(server, owner, rolloutId, (r) => r.waves[0].devices[0].state === "deploying");
  const checkIn = (snapshot: string | null, settings: string | null) =>
    fetch(`${server.url}/api/v1/devices/${first.id}/live/state`, {
      method: "POST",
      headers: { authorization: `Bearer ${first.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        state: "running",
        application: target.applicationId,
        snapshot,
        settings,
      }),
    });
  const wanted = (await (await checkIn(null, null)).json()) as { settings: string };
  expect((await checkIn(target.snapshotId, wanted.settings)).status).toBe(200);
  const health = await fetch(
    `${server.url}/api/v1/rollouts/${rolloutId}/devices/${first.id}/health`,
    {
      method: "POST",
      headers: {
        authorization: `Bearer ${rolloutHealthToken(TOKEN_SECRET, rolloutId, first.id)}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ event: "started" }),
    },
  );
  expect(health.status).toBe(200);
  await rolloutWhen(server, owner, rolloutId, (r) => r.state === "waiting_approval");
  return rolloutId;
}

/**
 * A notification of `user`'s: a device of their team offline (the event written as the devices
 * area writes it), once the events' consumer has put it in their inbox; its id.
 */
export async function createNotification(
  server: TestServer,
  user: TestUser,
  teamId: string,
): Promise<string> {
  const device = { id: unique("device"), name: unique("Sensor") };
  await recordEvent(server.db, {
    type: "device.offline",
    teamId,
    entity: { type: "device", id: device.id },
    data: { device },
  });
  return waiter(10_000, 50)(`${user.username}'s notification`, async () => {
    const reply = await server.request("GET", "/api/v1/user/notifications", { token: user.token });
    expect(reply.status, reply.text).toBe(200);
    const found = (
      reply.body.notifications as { id: string; data: { device?: { id: string } } }[]
    ).find((n) => n.data.device?.id === device.id);
    return found?.id;
  });
}

/**
 * A team webhook made by its owner through the API, pointing at a closed loopback port (the
 * harness allows 127.0.0.1), with one delivery queued in its log (written to the queue directly:
 * no event needs to be made for it).
 */
export async function createWebhookWithDelivery(
  server: TestServer,
  owner: Pick<TestUser, "token">,
  teamId: string,
): Promise<{ hookId: string; deliveryId: string }> {
  const reply = await server.request("POST", `/api/v1/teams/${teamId}/webhooks`, {
    token: owner.token,
    body: { url: "http://127.0.0.1:9/hook", eventTypes: ["walk.only"] },
  });
  expect(reply.status, `creating a webhook: ${reply.text}`).toBe(200);
  const hookId = reply.body.id as string;
  await enqueueDeliveries(server.db, [
    { webhookId: hookId, teamId, eventId: "1", eventType: "walk.only", payload: { id: "1" } },
  ]);
  const list = await server.request(
    "GET",
    `/api/v1/teams/${teamId}/webhooks/${hookId}/deliveries`,
    {
      token: owner.token,
    },
  );
  return { hookId, deliveryId: list.body.deliveries[0].id as string };
}

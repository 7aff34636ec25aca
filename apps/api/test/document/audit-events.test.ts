// Every change an operation makes is logged with the events FlowFuse writes for it (the reference's
// §7), walked over every write operation of the served document: each must be listed below with
// its events, so a new operation fails this file until it says what it logs, and each is called
// successfully on resources of its own and must have written every one of them.
import { EVENT_TYPES, Role } from "@flowplane/contract";
import { afterAll, describe, expect, test } from "vitest";
import { startServer } from "../support/harness";
import {
  awaitOperation,
  createApplication,
  createBrokerClient,
  createDevice,
  createDeviceSnapshot,
  createInstance,
  createInvitation,
  createLibraryEntry,
  createPipeline,
  createProvisioningToken,
  createRollout,
  createWebhookWithDelivery,
  createRunningDevice,
  createSnapshot,
  createTeam,
  createToken,
  isIdField,
  makeUser,
  type PipelineFixture,
  requiredQuery,
  rolloutTarget,
  rolloutWaitingApproval,
  type TestTeam,
  type TestUser,
  validBody,
} from "../support/team-fixtures";
import { type DocumentOperation, operationsOf, permissionOf, schemaWalker } from "../support/walk";

/**
 * The events each write operation logs: FlowFuse's names; where FlowFuse has no such operation or
 * logs none (team types, templates, broker tokens, the team broker's clients), Flowplane's own,
 * named in FlowFuse's manner. An empty list: the operation changes nothing (a check).
 */
const EVENTS: Record<string, string[]> = {
  "POST /api/v1/teams": ["team.created", "platform.team.created"],
  "POST /api/v1/teams/check-slug": [],
  // A person's notifications: FlowFuse logs nothing of reading or deleting them, nor do we (an
  // inbox's housekeeping, not a change to the account).
  "PUT /api/v1/user/notifications": [],
  "PUT /api/v1/user/notifications/{notificationId}": [],
  "DELETE /api/v1/user/notifications/{notificationId}": [],
  "POST /api/v1/rollouts": ["application.rollout.created"],
  "POST /api/v1/rollouts/{rolloutId}/pause": ["application.rollout.paused"],
  "POST /api/v1/rollouts/{rolloutId}/resume": ["application.rollout.resumed"],
  "POST /api/v1/rollouts/{rolloutId}/approve": ["application.rollout.approved"],
  "POST /api/v1/rollouts/{rolloutId}/abort": [
    "application.rollout.aborted",
    "device.rollout.rolled-back",
  ],
  "PUT /api/v1/teams/{teamId}": ["team.settings.updated"],
  "POST /api/v1/teams/{teamId}/webhooks": ["team.webhook.created"],
  "PUT /api/v1/teams/{teamId}/webhooks/{hookId}": ["team.webhook.updated"],
  "POST /api/v1/teams/{teamId}/webhooks/{hookId}/rotate-secret": ["team.webhook.updated"],
  "DELETE /api/v1/teams/{teamId}/webhooks/{hookId}": ["team.webhook.deleted"],
  "POST /api/v1/teams/{teamId}/webhooks/{hookId}/deliveries/{deliveryId}/redeliver": [],
  "DELETE /api/v1/teams/{teamId}": ["team.deleted", "platform.team.deleted"],
  "POST /api/v1/teams/{teamId}/invitations": ["team.user.invited"],
  "POST /api/v1/teams/{teamId}/invitations/{invitationId}": ["team.user.invite-resent"],
  "DELETE /api/v1/teams/{teamId}/invitations/{invitationId}": ["team.user.uninvited"],
  "PUT /api/v1/teams/{teamId}/members/{userId}": ["team.user.role-changed"],
  "DELETE /api/v1/teams/{teamId}/members/{userId}": ["team.user.removed"],
  "PATCH /api/v1/user/invitations/{invitationId}": [
    "user.invitation.accepted",
    "team.user.invite.accepted",
  ],
  "DELETE /api/v1/user/invitations/{invitationId}": [
    "user.invitation.deleted",
    "team.user.invite.rejected",
  ],
  "POST /api/v1/teams/{teamId}/broker/client": ["team.broker.client.created"],
  "PUT /api/v1/teams/{teamId}/broker/client/{username}": ["team.broker.client.updated"],
  "DELETE /api/v1/teams/{teamId}/broker/client/{username}": ["team.broker.client.deleted"],
  "POST /api/v1/team-types": ["platform.team-type.created"],
  "PUT /api/v1/team-types/{teamTypeId}": ["platform.team-type.updated"],
  "DELETE /api/v1/team-types/{teamTypeId}": ["platform.team-type.deleted"],
  "POST /api/v1/users": ["users.created-user"],
  "PUT /api/v1/users/{userId}": ["users.updated-user"],
  "DELETE /api/v1/users/{userId}": ["users.deleted-user"],
  "PUT /api/v1/user": ["user.updated-user"],
  "PUT /api/v1/user/change_password": ["user.updated-password"],
  "DELETE /api/v1/user/sessions": ["user.signed-out-everywhere"],
  // The caller's own account, with the team they owned alone.
  "DELETE /api/v1/user": ["user.deleted", "team.deleted", "platform.team.deleted"],
  "POST /api/v1/user/tokens": ["user.pat.created"],
  "PUT /api/v1/user/tokens/{id}": ["user.pat.updated"],
  "DELETE /api/v1/user/tokens/{id}": ["user.pat.deleted"],
  "POST /api/v1/broker/tokens": ["platform.broker-token.created"],
  "DELETE /api/v1/broker/tokens/{tokenId}": ["platform.broker-token.deleted"],
  "POST /api/v1/project-types": ["platform.project-type.created"],
  "PUT /api/v1/project-types/{instanceTypeId}": ["platform.project-type.updated"],
  "DELETE /api/v1/project-types/{instanceTypeId}": ["platform.project-type.deleted"],
  "POST /api/v1/stacks": ["platform.stack.created"],
  "PUT /api/v1/stacks/{stackId}": ["platform.stack.updated"],
  "DELETE /api/v1/stacks/{stackId}": ["platform.stack.deleted"],
  "POST /api/v1/templates": ["platform.template.created"],
  "PUT /api/v1/templates/{templateId}": ["platform.template.updated"],
  "DELETE /api/v1/templates/{templateId}": ["platform.template.deleted"],
  "POST /api/v1/applications": ["application.created"],
  "PUT /api/v1/applications/{applicationId}": ["application.updated"],
  "DELETE /api/v1/applications/{applicationId}": ["application.deleted"],
  "POST /api/v1/projects": ["project.created"],
  "POST /api/v1/projects/check-name": [],
  "POST /api/v1/projects/{instanceId}/editor/token": [],
  "PUT /api/v1/projects/{instanceId}": ["project.settings.updated"],
  "DELETE /api/v1/projects/{instanceId}": ["project.deleted"],
  "POST /api/v1/projects/{instanceId}/actions/start": ["project.started"],
  "POST /api/v1/projects/{instanceId}/actions/stop": ["project.stopped"],
  "POST /api/v1/projects/{instanceId}/actions/restart": ["project.restarted"],
  "POST /api/v1/projects/{instanceId}/actions/suspend": ["project.suspended"],
  "POST /api/v1/projects/{instanceId}/actions/rollback": ["project.snapshot.rolled-back"],
  "POST /api/v1/projects/{instanceId}/import": ["project.flow-imported"],
  "PUT /api/v1/settings": ["platform.settings.updated"],
  "POST /api/v1/projects/{instanceId}/devices/settings": ["project.snapshot.device-target-set"],
  "POST /api/v1/projects/{instanceId}/snapshots": ["project.snapshot.created"],
  "DELETE /api/v1/projects/{instanceId}/snapshots/{snapshotId}": ["project.snapshot.deleted"],
  "POST /api/v1/projects/{instanceId}/snapshots/{snapshotId}/export": ["project.snapshot.exported"],
  "POST /api/v1/snapshots/import": ["project.snapshot.imported"],
  "PUT /api/v1/snapshots/{snapshotId}": ["project.snapshot.updated"],
  "DELETE /api/v1/snapshots/{snapshotId}": ["project.snapshot.deleted"],
  "POST /api/v1/snapshots/{snapshotId}/export": ["project.snapshot.exported"],
  "POST /api/v1/devices": ["team.device.created"],
  "PUT /api/v1/devices/{deviceId}": ["team.device.updated"],
  "DELETE /api/v1/devices/{deviceId}": ["team.device.deleted"],
  "PUT /api/v1/teams/{teamId}/devices/bulk": [
    "team.device.assigned",
    "application.device.assigned",
    "device.assigned",
  ],
  "DELETE /api/v1/teams/{teamId}/devices/bulk": ["team.device.bulk-deleted"],
  "POST /api/v1/devices/{deviceId}/generate_credentials": [
    "team.device.credentials-generated",
    "device.credential.generated",
  ],
  "PUT /api/v1/devices/{deviceId}/settings": ["device.settings.updated"],
  "PUT /api/v1/devices/{deviceId}/mode": [
    "team.device.developer-mode.enabled",
    "device.developer-mode.enabled",
  ],
  "PUT /api/v1/devices/{deviceId}/editor": [
    "team.device.remote-access.disabled",
    "device.remote-access.disabled",
  ],
  // They need a connected device, which this walk's platform (no broker) has none of: their
  // events (device.restarted, device.restart-failed …) are device-actions.test.ts's.
  "POST /api/v1/devices/{deviceId}/actions/restart": [],
  "POST /api/v1/devices/{deviceId}/actions/suspend": [],
  "POST /api/v1/devices/{deviceId}/actions/start": [],
  "POST /api/v1/devices/{deviceId}/snapshots": ["application.device.snapshot.created"],
  "DELETE /api/v1/devices/{deviceId}/snapshots/{snapshotId}": [
    "application.device.snapshot.deleted",
  ],
  "POST /api/v1/devices/{deviceId}/snapshot": ["project.device.snapshot.created"],
  "POST /api/v1/teams/{teamId}/devices/provisioning": ["team.device.provisioning.created"],
  "PUT /api/v1/teams/{teamId}/devices/provisioning/{tokenId}": ["team.device.provisioning.updated"],
  "DELETE /api/v1/teams/{teamId}/devices/provisioning/{tokenId}": [
    "team.device.provisioning.deleted",
  ],
  "POST /api/v1/applications/{applicationId}/device-groups": ["application.deviceGroup.created"],
  "PUT /api/v1/applications/{applicationId}/device-groups/{groupId}": [
    "application.deviceGroup.updated",
  ],
  "PATCH /api/v1/applications/{applicationId}/device-groups/{groupId}": [
    "application.deviceGroup.members.changed",
  ],
  "PUT /api/v1/applications/{applicationId}/device-groups/{groupId}/settings": [
    "application.deviceGroup.settings.updated",
  ],
  "DELETE /api/v1/applications/{applicationId}/device-groups/{groupId}": [
    "application.deviceGroup.deleted",
  ],
  // FlowFuse's team library lives in its file server and logs nothing; Flowplane's own.
  "PUT /api/v1/teams/{teamId}/library/entry": ["team.library.entry.saved"],
  "DELETE /api/v1/teams/{teamId}/library/entry": ["team.library.entry.deleted"],
  "POST /api/v1/pipelines": ["application.pipeline.created"],
  "PUT /api/v1/pipelines/{pipelineId}": ["application.pipeline.updated"],
  "DELETE /api/v1/pipelines/{pipelineId}": ["application.pipeline.deleted"],
  "POST /api/v1/pipelines/{pipelineId}/stages": [
    "application.pipeline.stage-added",
    "project.assigned-to-pipeline-stage",
  ],
  // FlowFuse logs neither a stage's change nor its deletion; Flowplane's own.
  "PUT /api/v1/pipelines/{pipelineId}/stages/{stageId}": ["application.pipeline.stage-updated"],
  "DELETE /api/v1/pipelines/{pipelineId}/stages/{stageId}": ["application.pipeline.stage-deleted"],
  // The source's new snapshot, the target's copy of it, the deploy.
  "PUT /api/v1/pipelines/{pipelineId}/stages/{stageId}/deploy": [
    "project.snapshot.created",
    "project.snapshot.imported",
    "application.pipeline.stage-deployed",
  ],
};

const server = await startServer({ instances: "in-memory" });
const walker = schemaWalker(server.document);
afterAll(() => server.close());

/** A fresh team of its founder's (an owner), with another member. */
interface World {
  founder: TestUser;
  team: TestTeam;
  member: TestUser;
  /** The world's instance, made once it is first named (a snapshot in the path is one of its). */
  instance?: Promise<string>;
  /** The world's pipeline, made once it is first named (its stages and their instances). */
  pipeline?: Promise<PipelineFixture>;
  /** The application of the world's device groups, made once it is first named. */
  groupApplication?: Promise<string>;
  /** The world's running device of an application, made once it is first named (with its own
   * snapshots in the path), and one of an instance. */
  runningDevice?: ReturnType<typeof createRunningDevice>;
  instanceDevice?: ReturnType<typeof createRunningDevice>;
  /** The world's webhook with a delivery in its log, made once first named. */
  webhook?: ReturnType<typeof createWebhookWithDelivery>;
}

/** The world's webhook: one, so that a hook and its delivery in one path belong together. */
const webhookOf = (world: World) =>
  (world.webhook ??= createWebhookWithDelivery(server, world.founder, world.team.id));

/** The world's instance: one, so that an instance and its snapshot in one path belong together. */
const instanceOf = (world: World) =>
  (world.instance ??= createInstance(server, world.founder, world.team.id));

/** The world's pipeline: one, so that a pipeline, its stage and its instance belong together. */
const pipelineOf = (world: World) =>
  (world.pipeline ??= createPipeline(server, world.founder, world.team.id));

/** The application of the world's device groups: one, so that a group and its path agree. */
const groupApplicationOf = (world: World) =>
  (world.groupApplication ??= createApplication(server, world.founder, world.team.id));

/** The world's running devices: a device and its snapshot in one path belong together. */
const runningDeviceOf = (world: World) =>
  (world.runningDevice ??= createRunningDevice(server, world.founder, world.team.id));
const instanceDeviceOf = (world: World) =>
  (world.instanceDevice ??= createRunningDevice(server, world.founder, world.team.id, {
    of: "instance",
  }));

/** A device group of the world's group application. */
async function createGroup(world: World): Promise<string> {
  const applicationId = await groupApplicationOf(world);
  const reply = await server.request(
    "POST",
    `/api/v1/applications/${applicationId}/device-groups`,
    {
      token: world.founder.token,
      body: { name: `group-${Math.random().toString(36).slice(2, 8)}` },
    },
  );
  expect(reply.status, reply.text).toBe(201);
  return reply.body.id;
}

/** A request as one caller: a token, or (a password change) a signed-in session. */
interface Call {
  token?: string;
  sid?: string;
  path?: string;
  body?: Record<string, unknown>;
}

/** An entry of the platform's catalogue (or a team type) of its own, made by the administrator. */
async function catalogueEntry(collection: string): Promise<string> {
  const operation = operationsOf(server.document).find(
    (o) => o.name === `POST /api/v1/${collection}`,
  )!;
  const reply = await server.request("POST", `/api/v1/${collection}`, {
    body: validBody(walker, operation),
  });
  expect(reply.status, `POST /api/v1/${collection}: ${reply.text}`).toBeLessThan(300);
  return reply.body.id;
}

/** Path parameters, each a resource of the world's made through the API. */
const PATH_VALUES: Record<string, (world: World, template: string) => Promise<string>> = {
  teamId: async (world) => world.team.id,
  userId: async (world) => world.member.id,
  invitationId: async (world) =>
    createInvitation(server, world.founder, world.team.id, await makeUser(server)),
  username: async (world) => createBrokerClient(server, world.founder, world.team.id),
  applicationId: async (world, template) =>
    template.includes("/device-groups")
      ? groupApplicationOf(world)
      : createApplication(server, world.founder, world.team.id),
  groupId: async (world) => createGroup(world),
  instanceId: async (world) => instanceOf(world),
  snapshotId: async (world, template) =>
    template.startsWith("/api/v1/devices/")
      ? createDeviceSnapshot(server, world.founder, (await runningDeviceOf(world)).deviceId)
      : createSnapshot(server, world.founder, await instanceOf(world)),
  id: async (world) => createToken(server, world.founder),
  deviceId: async (world, template) =>
    template.endsWith("/snapshot")
      ? (await instanceDeviceOf(world)).deviceId
      : template.includes("/snapshots")
        ? (await runningDeviceOf(world)).deviceId
        : createDevice(server, world.founder, world.team.id),
  tokenId: async (world, template) => {
    if (template.includes("/devices/provisioning/")) {
      return createProvisioningToken(server, world.founder, world.team.id);
    }
    const reply = await server.request("POST", "/api/v1/broker/tokens", { body: { name: "walk" } });
    expect(reply.status, reply.text).toBeLessThan(300);
    return reply.body.id;
  },
  teamTypeId: () => catalogueEntry("team-types"),
  instanceTypeId: () => catalogueEntry("project-types"),
  stackId: () => catalogueEntry("stacks"),
  templateId: () => catalogueEntry("templates"),
  pipelineId: async (world) => (await pipelineOf(world)).pipelineId,
  stageId: async (world) => (await pipelineOf(world)).stageId,
  hookId: async (world) => (await webhookOf(world)).hookId,
  deliveryId: async (world) => (await webhookOf(world)).deliveryId,
  rolloutId: async (world, template) =>
    template.endsWith("/approve")
      ? rolloutWaitingApproval(server, world.founder, world.team.id)
      : (await createRollout(server, world.founder, world.team.id)).rolloutId,
};

const BODY_VALUES: Record<string, (world: World) => unknown> = {
  applicationId: (world) => createApplication(server, world.founder, world.team.id),
  teamId: (world) => world.team.id,
  teamIds: (world) => [world.team.id],
  defaultTeam: (world) => world.team.id,
  ownerId: (world) => instanceOf(world),
  // A new device's team.
  team: (world) => world.team.id,
  targetSnapshot: async (world) => createSnapshot(server, world.founder, await instanceOf(world)),
  snapshot: async (world) => createSnapshot(server, world.founder, await instanceOf(world)),
  // A stage's instance: one of the pipeline's application.
  instanceId: async (world) => (await pipelineOf(world)).instanceIds[0],
  // A bulk request's devices.
  devices: async (world) => [await createDevice(server, world.founder, world.team.id)],
};

/** Operations whose caller is not the team's founder (or the administrator for theirs). */
const CALLS: Record<string, (world: World, call: Call) => Promise<Call>> = {
  // The invitee answers their own invitation.
  "PATCH /api/v1/user/invitations/{invitationId}": (world) => asInvitee(world),
  "DELETE /api/v1/user/invitations/{invitationId}": (world) => asInvitee(world),
  // A signed-in person changes their password, giving the current one.
  "PUT /api/v1/user/change_password": async () => {
    const person = await server.userWithPassword();
    const sid = await server.signIn(person.username, person.password);
    return {
      sid,
      path: "/api/v1/user/change_password",
      body: { old_password: person.password, password: "a whole new walk password" },
    };
  },
  // A person deletes their account: they own a team of their own alone.
  "DELETE /api/v1/user": async () => {
    const person = await makeUser(server);
    await createTeam(server, person);
    return { token: person.token, path: "/api/v1/user" };
  },
  "POST /api/v1/users": async (_world, call) => ({
    ...call,
    body: { ...call.body, password: "a walk password of some length" },
  }),
  "POST /api/v1/teams/{teamId}/invitations": async (_world, call) => ({
    ...call,
    body: { user: (await makeUser(server)).username, role: Role.member },
  }),
  "PUT /api/v1/teams/{teamId}/members/{userId}": async (_world, call) => ({
    ...call,
    body: { role: Role.viewer },
  }),
  // A change is logged: the setting is turned off first, and the call turns it on again.
  "PUT /api/v1/settings": async (_world, call) => {
    const off = await server.request("PUT", "/api/v1/settings", {
      token: server.adminToken,
      body: { "team:create": false },
    });
    expect(off.status, off.text).toBe(200);
    return { ...call, body: { "team:create": true } };
  },
  // An import of what an export gave.
  "POST /api/v1/snapshots/import": async (world, call) => {
    const snapshotId = await createSnapshot(server, world.founder, await instanceOf(world));
    const exported = await server.request("POST", `/api/v1/snapshots/${snapshotId}/export`, {
      token: world.founder.token,
      body: { credentialSecret: "a walked credential secret" },
    });
    expect(exported.status, exported.text).toBe(200);
    const { name, flows, settings } = exported.body;
    return {
      ...call,
      body: {
        ownerId: await instanceOf(world),
        ownerType: "instance",
        snapshot: { name, flows, settings },
        credentialSecret: "a walked credential secret",
      },
    };
  },
  // A new stage after the last, with an instance of the application no stage has yet (a
  // pipeline has each instance in one stage).
  "POST /api/v1/pipelines/{pipelineId}/stages": async (world, call) => {
    const pipeline = await pipelineOf(world);
    const instance = await server.request("POST", "/api/v1/projects", {
      token: world.founder.token,
      body: { name: `added-${Date.now().toString(36)}`, applicationId: pipeline.applicationId },
    });
    expect(instance.status, instance.text).toBe(200);
    return {
      ...call,
      body: { ...call.body, instanceId: instance.body.id, source: pipeline.lastStageId },
    };
  },
  // A member added: a device of the group's application.
  "PATCH /api/v1/applications/{applicationId}/device-groups/{groupId}": async (world, call) => {
    const device = await server.request("POST", "/api/v1/devices", {
      token: world.founder.token,
      body: { name: "grouped", team: world.team.id, application: await groupApplicationOf(world) },
    });
    expect(device.status, device.text).toBeLessThan(300);
    return { ...call, body: { add: [device.body.id] } };
  },
  "PUT /api/v1/applications/{applicationId}/device-groups/{groupId}/settings": async (
    _world,
    call,
  ) => ({ ...call, body: { env: [{ name: "WALKED", value: "yes" }] } }),
  // The devices moved to an application of the team.
  "PUT /api/v1/teams/{teamId}/devices/bulk": async (world, call) => ({
    ...call,
    body: {
      ...call.body,
      application: await createApplication(server, world.founder, world.team.id),
    },
  }),
  "PUT /api/v1/devices/{deviceId}/settings": async (_world, call) => ({
    ...call,
    body: { env: [{ name: "WALKED", value: "yes" }] },
  }),
  "PUT /api/v1/devices/{deviceId}/mode": async (_world, call) => ({
    ...call,
    body: { mode: "developer" },
  }),
  // Enabling needs a connected agent (device-editor.test.ts); disabling is logged as FlowFuse does.
  "PUT /api/v1/devices/{deviceId}/editor": async (_world, call) => ({
    ...call,
    body: { enabled: false },
  }),
  "PUT /api/v1/teams/{teamId}/broker/client/{username}": async (_world, call) => ({
    ...call,
    body: { password: "another-walked-client-secret" },
  }),
  // A rollout of a snapshot to a group of the snapshot's application.
  "POST /api/v1/rollouts": async (world, call) => {
    const target = await rolloutTarget(server, world.founder, world.team.id);
    return {
      ...call,
      body: { snapshotId: target.snapshotId, deviceGroupId: target.groupId, waves: [{ count: 1 }] },
    };
  },
  // A paused rollout resumed.
  "POST /api/v1/rollouts/{rolloutId}/resume": async (world, call) => {
    const paused = await server.request("POST", call.path!.replace(/resume$/, "pause"), {
      token: world.founder.token,
    });
    expect(paused.status, paused.text).toBe(200);
    return call;
  },
};

async function asInvitee(world: World): Promise<Call> {
  const invitee = await makeUser(server);
  const id = await createInvitation(server, world.founder, world.team.id, invitee);
  return { token: invitee.token, path: `/api/v1/user/invitations/${id}` };
}

const writes = operationsOf(server.document).filter((o) => o.method !== "GET");

test("every write operation of the document says what it logs", () => {
  expect(
    writes.map((o) => o.name).filter((name) => !(name in EVENTS)),
    "operations audit-events.test.ts does not know: add each to EVENTS with the events FlowFuse writes for it (reference §7)",
  ).toEqual([]);
});

test("every audit event of a team's is in the events' catalogue (its stream's schema per type)", () => {
  // The platform's and a person's own logs have no team: their entries are on no team's stream.
  const teamless = /^(platform|user|users|account)\./;
  const logged = new Set(Object.values(EVENTS).flat());
  expect(
    [...logged].filter((name) => !teamless.test(name) && !(name in EVENT_TYPES)),
    "add each to EVENT_TYPES (packages/contract/src/events.ts)",
  ).toEqual([]);
});

async function prepare(operation: DocumentOperation, world: World): Promise<Call> {
  const values: Record<string, string> = {};
  for (const param of operation.pathParams) {
    const fill = PATH_VALUES[param];
    if (!fill) throw new Error(`${operation.name}: add {${param}} to PATH_VALUES`);
    values[param] = await fill(world, operation.template);
  }
  const body = validBody(walker, operation);
  // A change must change something: a new name where the operation takes one.
  const schema = walker.bodySchema(operation.operation);
  if (body && operation.method === "PUT" && schema?.properties?.name) {
    body.name = `renamed-${Math.random().toString(36).slice(2, 8)}`;
  }
  if (body) {
    for (const field of Object.keys(body).filter(
      (field) => isIdField(field) || field in BODY_VALUES,
    )) {
      if (field in BODY_VALUES) body[field] = await BODY_VALUES[field]!(world);
    }
  }
  // Administrators' operations (and another user's account) as the administrator; the rest as
  // the team's founder.
  const { rule } = permissionOf(operation);
  const asAdmin =
    rule.kind === "admin" || (operation.pathParams.includes("userId") && rule.kind === "self");
  const call: Call = {
    token: asAdmin ? server.adminToken : world.founder.token,
    path:
      operation.template.replace(/\{(\w+)\}/g, (_, param: string) => values[param]!) +
      requiredQuery(operation, walker.example),
    ...(body ? { body } : {}),
  };
  return CALLS[operation.name] ? CALLS[operation.name]!(world, call) : call;
}

describe("each write operation logs the events FlowFuse writes for it", () => {
  for (const operation of writes) {
    const expected = EVENTS[operation.name] ?? [];
    if (expected.length === 0) continue;
    test(`${operation.name}: ${expected.join(", ")}`, async () => {
      const founder = await makeUser(server);
      const team = await createTeam(server, founder);
      const member = await makeUser(server, { teams: [{ id: team.id, role: Role.member }] });
      // The entry the library's operations name in their query.
      if (operation.template.includes("/library/")) {
        await createLibraryEntry(server, founder, team.id);
      }
      const call = await prepare(operation, { founder, team, member });

      const before = await server.db.selectFrom("audit_log").select("id").execute();
      const seen = new Set(before.map((row) => row.id));
      const reply = call.sid
        ? await server.asSession(call.sid, operation.method, call.path!, { body: call.body })
        : await server.request(operation.method, call.path!, {
            token: call.token,
            ...(call.body ? { body: call.body } : {}),
          });
      expect(reply.status, `${operation.method} ${call.path}: ${reply.text}`).toBeLessThan(300);
      // Work that goes on in the background (a deploy) is awaited through its operation.
      if (typeof reply.body?.operation?.id === "string") {
        const done = await awaitOperation(server, { token: call.token! }, reply.body.operation.id);
        expect(done.status, JSON.stringify(done.error)).toBe("succeeded");
      }
      const written = (await server.db.selectFrom("audit_log").select(["id", "event"]).execute())
        .filter((row) => !seen.has(row.id))
        .map((row) => row.event);
      expect(written, `${operation.name} wrote ${written.join(", ") || "nothing"}`).toEqual(
        expect.arrayContaining(expected),
      );
    });
  }
});

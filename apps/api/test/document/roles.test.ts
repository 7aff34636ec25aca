// Every team operation of the served document, called by each team role (dashboard, viewer, member,
// owner) and by an owner's read-only token, on a real team of their own: allowed exactly when the
// permission matrix (PERMISSIONS in @flowplane/auth) says so, else 403. Expectations come from the
// matrix and operations from the document, so a new operation is covered the moment it is
// declared; a path parameter this file cannot fill fails until the fixtures learn it.
import { type PermissionRule } from "@flowplane/auth";
import { Role } from "@flowplane/contract";
import { afterAll, describe, expect, test } from "vitest";
import { startServer } from "../support/harness";
import {
  createApplication,
  createBrokerClient,
  createDevice,
  createDeviceSnapshot,
  createInstance,
  createProvisioningToken,
  createRollout,
  createWebhookWithDelivery,
  createRunningDevice,
  createSnapshot,
  createInvitation,
  createLibraryEntry,
  createOperation,
  createPipeline,
  createTeam,
  GLOBAL_PATH_PARAMS,
  isIdField,
  makeUser,
  type PipelineFixture,
  requiredQuery,
  type TestTeam,
  type TestUser,
  validBody,
} from "../support/team-fixtures";
import { operationsOf, permissionOf, schemaWalker } from "../support/walk";

const server = await startServer({ instances: "in-memory" });
const walker = schemaWalker(server.document);
afterAll(() => server.close());

/** A fresh team (made by its founder, an owner), the caller in it, and another member. */
interface World {
  founder: TestUser;
  team: TestTeam;
  caller: TestUser;
  /** A member (30) other than the caller: the one member operations act on. */
  member: TestUser;
  /** The world's instance, made once it is first named (a snapshot in the path is one of its). */
  instance?: Promise<string>;
  /** The world's application, made once it is first named (a device group is one of its). */
  application?: Promise<string>;
  /** The world's pipeline, made once it is first named (its stages and their instances). */
  pipeline?: Promise<PipelineFixture>;
  /** The world's running device of an application, and of an instance, made once first named. */
  runningDevice?: ReturnType<typeof createRunningDevice>;
  instanceDevice?: ReturnType<typeof createRunningDevice>;
  /** The world's webhook with a delivery in its log, made once first named. */
  webhook?: ReturnType<typeof createWebhookWithDelivery>;
}

/** The world's running devices: a device and its snapshot in one path belong together. */
const runningDeviceOf = (world: World) =>
  (world.runningDevice ??= createRunningDevice(server, world.founder, world.team.id));
const instanceDeviceOf = (world: World) =>
  (world.instanceDevice ??= createRunningDevice(server, world.founder, world.team.id, {
    of: "instance",
  }));

/** The world's webhook: one, so that a hook and its delivery in one path belong together. */
const webhookOf = (world: World) =>
  (world.webhook ??= createWebhookWithDelivery(server, world.founder, world.team.id));

/** The world's application: one, so that a device group in the path is one of its. */
const applicationOf = (world: World) =>
  (world.application ??= createApplication(server, world.founder, world.team.id));

/** The world's pipeline: one, so that a pipeline, its stage and its instance belong together. */
const pipelineOf = (world: World) =>
  (world.pipeline ??= createPipeline(server, world.founder, world.team.id));

/** The world's instance: one, so that an instance and its snapshot in one path belong together. */
const instanceOf = (world: World) =>
  (world.instance ??= createInstance(server, world.founder, world.team.id));

/**
 * How each path parameter is filled in a world. Extend this when an operation brings a new
 * parameter: make the resource through the API, as the team's founder would.
 */
const PATH_VALUES: Record<string, (world: World, template: string) => Promise<string>> = {
  teamId: async (world) => world.team.id,
  slug: async (world) => world.team.slug,
  userId: async (world) => world.member.id,
  invitationId: async (world) =>
    createInvitation(server, world.founder, world.team.id, await makeUser(server)),
  username: async (world) => createBrokerClient(server, world.founder, world.team.id),
  applicationId: async (world) => applicationOf(world),
  groupId: async (world) => {
    const path = `/api/v1/applications/${await applicationOf(world)}/device-groups`;
    const reply = await server.request("POST", path, {
      token: world.founder.token,
      body: { name: "walked group" },
    });
    return reply.body.id;
  },
  instanceId: async (world) => instanceOf(world),
  snapshotId: async (world, template) =>
    template.startsWith("/api/v1/devices/")
      ? createDeviceSnapshot(server, world.founder, (await runningDeviceOf(world)).deviceId)
      : createSnapshot(server, world.founder, await instanceOf(world)),
  pipelineId: async (world) => (await pipelineOf(world)).pipelineId,
  stageId: async (world) => (await pipelineOf(world)).stageId,
  operationId: async (world) => createOperation(server, world.founder, await pipelineOf(world)),
  deviceId: async (world, template) =>
    template.endsWith("/snapshot")
      ? (await instanceDeviceOf(world)).deviceId
      : template.includes("/snapshots")
        ? (await runningDeviceOf(world)).deviceId
        : createDevice(server, world.founder, world.team.id),
  tokenId: async (world) => createProvisioningToken(server, world.founder, world.team.id),
  rolloutId: async (world) => (await createRollout(server, world.founder, world.team.id)).rolloutId,
  hookId: async (world) => (await webhookOf(world)).hookId,
  deliveryId: async (world) => (await webhookOf(world)).deliveryId,
};

let staged = 0;

/** Body fields that are ids, filled with the world's own resources. */
const BODY_VALUES: Record<string, (world: World) => unknown | Promise<unknown>> = {
  applicationId: (world) => createApplication(server, world.founder, world.team.id),
  teamId: (world) => world.team.id,
  teamIds: (world) => [world.team.id],
  webhookId: async (world) => (await webhookOf(world)).hookId,
  defaultTeam: (world) => world.team.id,
  userId: (world) => world.member.id,
  ownerId: (world) => instanceOf(world),
  targetSnapshot: async (world) => createSnapshot(server, world.founder, await instanceOf(world)),
  // A rollout's snapshot (its body names no target: 400 for whoever may start one).
  snapshotId: async (world) => createSnapshot(server, world.founder, await instanceOf(world)),
  snapshot: async (world) => createSnapshot(server, world.founder, await instanceOf(world)),
  // A stage's instance: a new one of the pipeline's application (a pipeline has each instance in
  // one stage, so one of its stages' would be refused whatever the role).
  instanceId: async (world) => {
    const reply = await server.request("POST", "/api/v1/projects", {
      token: world.founder.token,
      body: {
        name: `staged-${++staged}-${Date.now().toString(36)}`,
        applicationId: (await pipelineOf(world)).applicationId,
      },
    });
    expect(reply.status, reply.text).toBe(200);
    return reply.body.id;
  },
  // A stage's other targets: validBody gives a stage its instance, so these are never sent.
  deviceGroupId: () => {
    throw new Error("roles.test.ts sends a stage's instance, not a device group");
  },
  deviceId: () => {
    throw new Error("roles.test.ts sends a stage's instance, not a device");
  },
  // A snapshot of the pipeline's first stage's instance, which a deploy from it may send.
  sourceSnapshotId: async (world) =>
    createSnapshot(server, world.founder, (await pipelineOf(world)).instanceIds[0]),
  team: (world) => world.team.id,
  application: (world) => createApplication(server, world.founder, world.team.id),
  instance: (world) => instanceOf(world),
  targetSnapshotId: () => null,
  add: () => [],
  remove: () => [],
  set: () => [],
  // A bulk request's devices: one of the world's; a group is never sent (only `devices` is required).
  devices: async (world) => [await createDevice(server, world.founder, world.team.id)],
  deviceGroup: () => {
    throw new Error("roles.test.ts sends a bulk request's devices alone");
  },
};

interface CallerKind {
  label: string;
  role: number;
  readOnly: boolean;
}

const CALLERS: CallerKind[] = [
  { label: "dashboard (5)", role: Role.dashboard, readOnly: false },
  { label: "viewer (10)", role: Role.viewer, readOnly: false },
  { label: "member (30)", role: Role.member, readOnly: false },
  { label: "owner (50)", role: Role.owner, readOnly: false },
  { label: "owner (50) with a read-only token", role: Role.owner, readOnly: true },
];

/** What the matrix says: may this caller do it? */
function mayAct(rule: PermissionRule & { kind: "team" }, caller: CallerKind, onSelf: boolean) {
  if (caller.readOnly && rule.access === "write") return false;
  return caller.role >= rule.role || ("orSelf" in rule && onSelf);
}

async function makeWorld(caller: CallerKind): Promise<World> {
  const founder = await makeUser(server);
  const team = await createTeam(server, founder);
  const member = await makeUser(server, { teams: [{ id: team.id, role: Role.member }] });
  const callerUser = await makeUser(server, {
    teams: [{ id: team.id, role: caller.role }],
    scope: { readOnly: caller.readOnly },
  });
  return { founder, team, caller: callerUser, member };
}

const teamOperations = operationsOf(server.document).filter(
  (operation) => permissionOf(operation).rule.kind === "team",
);

test("the document has team operations to walk", () => {
  expect(teamOperations.length).toBeGreaterThan(1);
});

describe("each team role may do what the permission matrix says, and is 403 otherwise", () => {
  for (const operation of teamOperations) {
    const { permission, rule } = permissionOf(operation);
    const teamRule = rule as PermissionRule & { kind: "team" };

    test(`${operation.name} (${permission})`, async () => {
      const unknown = operation.pathParams.filter(
        (p) => !(p in PATH_VALUES) && !(p in GLOBAL_PATH_PARAMS),
      );
      expect(
        unknown,
        `${operation.name}: path parameters roles.test.ts cannot fill; add each to PATH_VALUES (make the resource through the API)`,
      ).toEqual([]);
      // An object named like an id (an import's `snapshot`) is content, not a reference.
      const idFields = Object.entries(walker.bodySchema(operation.operation)?.properties ?? {})
        .filter(([field, schema]) => isIdField(field) && !walker.jsonTypes(schema).has("object"))
        .map(([field]) => field);
      expect(
        idFields.filter((f) => !(f in BODY_VALUES)),
        `${operation.name}: body id fields roles.test.ts cannot fill; add each to BODY_VALUES`,
      ).toEqual([]);

      // With `orSelf`, a member below the role may still act on their own membership.
      const onSelfCases = "orSelf" in teamRule && operation.pathParams.includes("userId");
      const problems: string[] = [];
      for (const caller of CALLERS) {
        for (const onSelf of onSelfCases ? [false, true] : [false]) {
          // A fresh team each time: an allowed call may change or delete it.
          const world = await makeWorld(caller);
          // The entry the library's operations name in their query.
          if (operation.template.includes("/library/")) {
            await createLibraryEntry(server, world.founder, world.team.id);
          }
          const values: Record<string, string> = {};
          for (const param of operation.pathParams) {
            values[param] =
              param === "userId" && onSelf
                ? world.caller.id
                : (GLOBAL_PATH_PARAMS[param]?.() ??
                  (await PATH_VALUES[param]!(world, operation.template)));
          }
          const path =
            operation.template.replace(/\{(\w+)\}/g, (_, param: string) => values[param]!) +
            requiredQuery(operation, walker.example, world.team.id);
          const body = validBody(walker, operation);
          if (body) {
            for (const field of idFields) {
              if (field in body) body[field] = await BODY_VALUES[field]!(world);
            }
          }
          const reply = await server.request(operation.method, path, {
            token: world.caller.token,
            ...(body ? { body } : {}),
          });
          const may = mayAct(teamRule, caller, onSelf);
          const ok = may
            ? reply.status < 500 && reply.status !== 403 && reply.status !== 404
            : reply.status === 403;
          if (!ok) {
            problems.push(
              `${caller.label}${onSelf ? " on their own membership" : ""}: ${operation.method} ${path}${body ? ` ${JSON.stringify(body)}` : ""} → ${reply.status} ${reply.text.slice(0, 300)}; the matrix says ${may ? "allowed (not 403/404)" : "403"}`,
            );
          }
        }
      }
      expect(problems).toEqual([]);
    }, 180_000);
  }
});

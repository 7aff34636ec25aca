// Isolation between teams, walked over every operation of the served document: the owner of team B
// names team A's resources (in the path, and in body fields that are ids) and gets 404 (path),
// 400 (body; 404 where the operation says `unseenIsNotFound`) or, for administrators' operations, 403 — never a success — and team A is exactly as
// it was; a body that leaves a required id out is 400 naming it. Operations are read from the document, so a new one is walked the moment it is declared;
// a path parameter this file does not know fails the walk until the fixtures below learn it.
import { afterAll, beforeAll, expect, test } from "vitest";
import { restRoutes } from "../../src/core/rest";
import type { Meta } from "../../src/core/trpc";
import { appRouter } from "../../src/router";
import { type Reply, startServer, type TestServer } from "../support/harness";
import {
  createApplication,
  createBrokerClient,
  createDevice,
  createInstance,
  createProvisioningToken,
  createNotification,
  createRollout,
  createWebhookWithDelivery,
  createSnapshot,
  createInvitation,
  createLibraryEntry,
  createOperation,
  createPipeline,
  createTeam,
  createToken,
  GLOBAL_PATH_PARAMS,
  isIdField,
  makeUser,
  type PipelineFixture,
  requiredQuery,
  type TestTeam,
  type TestUser,
  validBody,
} from "../support/team-fixtures";
import {
  type DocumentOperation,
  operationsOf,
  permissionOf,
  schemaWalker,
  type SchemaWalker,
} from "../support/walk";

/**
 * Operations whose meta says `unseenIsNotFound` (`POST /pipelines`, FlowFuse's answer): another
 * team's id in their body is 404, not 400.
 */
const UNSEEN_IS_NOT_FOUND = new Set(
  restRoutes(appRouter)
    .filter((route) => (route.procedure._def.meta as Meta).unseenIsNotFound)
    .map((route) => `${route.method} ${route.path}`),
);

let server: TestServer;
let walker: SchemaWalker;
beforeAll(async () => {
  server = await startServer({ instances: "in-memory" });
  walker = schemaWalker(server.document);
});
afterAll(() => server.close());

/** One side of the walk: a team, its owner (who acts), another member, and what they made. */
interface Side {
  owner: TestUser;
  team: TestTeam;
  member: TestUser;
  /** A second token of the owner's. */
  tokenId: string;
  /** Made on demand (only once an operation names an invitation). */
  invitationId?: string;
  /** A broker client's username, made on demand. */
  brokerClient?: string;
  /** An application and an instance in it, made on demand. */
  applicationId?: string;
  instanceId?: string;
  /** A snapshot of that instance, made on demand. */
  snapshotId?: string;
  /** A pipeline of two stages (instances of an application of their own), made on demand. */
  pipeline?: PipelineFixture;
  /** A deploy of that pipeline, done; a snapshot of its first stage's instance. */
  operationId?: string;
  pipelineSnapshotId?: string;
  /** A device and a provisioning token, made on demand. */
  deviceId?: string;
  /** A device group of the side's application, and a device of that application. */
  groupId?: string;
  groupDeviceId?: string;
  provisioningTokenId?: string;
  /** A rollout under way (its own application, group and device). */
  rolloutId?: string;
  /** A notification of the owner's. */
  notificationId?: string;
  /** A webhook with a delivery in its log. */
  hookId?: string;
  deliveryId?: string;
}

/**
 * Path parameters that name a team's resource (or a user's): team A's value (`foreign`) and the
 * walker's own (`own`). Extend this when an operation brings a new parameter: create the resource
 * through the API in `prepare` below.
 */
const PATH_IDS: Record<string, (side: Side, whose: "foreign" | "own") => string | undefined> = {
  teamId: (side) => side.team.id,
  slug: (side) => side.team.slug,
  // Team A's member (not a member of B); the walker's own account.
  userId: (side, whose) => (whose === "foreign" ? side.member.id : side.owner.id),
  // /user/tokens/{id}: a token of the side's owner.
  id: (side) => side.tokenId,
  invitationId: (side) => side.invitationId,
  username: (side) => side.brokerClient,
  applicationId: (side) => side.applicationId,
  instanceId: (side) => side.instanceId,
  snapshotId: (side) => side.snapshotId,
  pipelineId: (side) => side.pipeline?.pipelineId,
  stageId: (side) => side.pipeline?.stageId,
  operationId: (side) => side.operationId,
  // A team's provisioning token; broker tokens are the platform's (administrators only): any id
  // gets the same 403 there.
  tokenId: (side) => side.provisioningTokenId ?? "brokertoken1",
  deviceId: (side) => side.deviceId,
  groupId: (side) => side.groupId,
  rolloutId: (side) => side.rolloutId,
  // A person's notification: the side's owner's.
  notificationId: (side) => side.notificationId,
  hookId: (side) => side.hookId,
  deliveryId: (side) => side.deliveryId,
};

/** Body fields that are ids: team A's value, and the walker's own. */
const BODY_IDS: Record<string, (side: Side) => unknown> = {
  teamId: (side) => side.team.id,
  teamIds: (side) => [side.team.id],
  defaultTeam: (side) => side.team.id,
  applicationId: (side) => side.applicationId,
  ownerId: (side) => side.instanceId,
  targetSnapshot: (side) => side.snapshotId,
  snapshot: (side) => side.snapshotId,
  instanceId: (side) => side.pipeline?.instanceIds[0],
  // A stage's other targets: team A's group and device.
  deviceGroupId: (side) => side.groupId,
  deviceId: (side) => side.groupDeviceId,
  sourceSnapshotId: (side) => side.pipelineSnapshotId,
  team: (side) => side.team.id,
  application: (side) => side.applicationId,
  instance: (side) => side.instanceId,
  targetSnapshotId: (side) => side.snapshotId,
  add: (side) => [side.groupDeviceId],
  remove: (side) => [side.groupDeviceId],
  set: (side) => [side.groupDeviceId],
  // A bulk request's devices and the group they move to.
  devices: (side) => [side.groupDeviceId],
  deviceGroup: (side) => side.groupId,
  // A rollout's snapshot.
  snapshotId: (side) => side.snapshotId,
  // Notifications marked at once: the side's owner's.
  ids: (side) => [side.notificationId],
  // A pipeline stage's webhook: the side's team's.
  webhookId: (side) => side.hookId,
};
/** Body id fields that name a platform-wide resource: the example value stays. */
const GLOBAL_BODY_IDS = new Set<string>(["teamTypeId"]);

let a: Side;
let w: Side;
/** Replies to team A's owner, while snapshotting, that the document does not allow. */
const snapshotProblems = new Set<string>();

async function makeSide(): Promise<Side> {
  const owner = await makeUser(server);
  const team = await createTeam(server, owner);
  const member = await makeUser(server, { teams: [{ id: team.id, role: 30 }] });
  return { owner, team, member, tokenId: await createToken(server, owner) };
}

/** Makes what the operations' parameters need, before the walk, so the snapshot stays still. */
async function prepare(operations: DocumentOperation[]) {
  const params = new Set(operations.flatMap((o) => o.pathParams));
  if (params.has("invitationId")) {
    for (const side of [a, w]) {
      const invitee = await makeUser(server);
      side.invitationId = await createInvitation(server, side.owner, side.team.id, invitee);
    }
  }
  const bodies = operations.flatMap((o) =>
    Object.keys(walker.bodySchema(o.operation)?.properties ?? {}),
  );
  if (
    params.has("applicationId") ||
    params.has("instanceId") ||
    params.has("snapshotId") ||
    bodies.includes("applicationId") ||
    bodies.includes("ownerId") ||
    bodies.includes("application")
  ) {
    for (const side of [a, w]) {
      side.applicationId = await createApplication(server, side.owner, side.team.id);
      side.instanceId = await createInstance(server, side.owner, side.team.id);
      side.snapshotId = await createSnapshot(server, side.owner, side.instanceId);
    }
  }
  if (params.has("groupId") || bodies.includes("devices") || bodies.includes("deviceGroup")) {
    for (const side of [a, w]) {
      const path = `/api/v1/applications/${side.applicationId}/device-groups`;
      const group = await server.request("POST", path, {
        token: side.owner.token,
        body: { name: `group-${Math.random().toString(36).slice(2, 8)}` },
      });
      expect(group.status, group.text).toBe(201);
      side.groupId = group.body.id;
      const device = await server.request("POST", "/api/v1/devices", {
        token: side.owner.token,
        body: { name: "member", team: side.team.id, application: side.applicationId },
      });
      side.groupDeviceId = device.body.id;
    }
  }
  if (params.has("pipelineId") || params.has("operationId")) {
    for (const side of [a, w]) {
      side.pipeline = await createPipeline(server, side.owner, side.team.id);
      side.operationId = await createOperation(server, side.owner, side.pipeline);
      side.pipelineSnapshotId = await createSnapshot(
        server,
        side.owner,
        side.pipeline.instanceIds[0],
      );
    }
  }
  if (params.has("deviceId") || params.has("tokenId")) {
    for (const side of [a, w]) {
      side.deviceId = await createDevice(server, side.owner, side.team.id);
      side.provisioningTokenId = await createProvisioningToken(server, side.owner, side.team.id);
    }
  }
  if (operations.some((o) => o.template.includes("/library/"))) {
    for (const side of [a, w]) await createLibraryEntry(server, side.owner, side.team.id);
  }
  if (params.has("rolloutId")) {
    for (const side of [a, w]) {
      side.rolloutId = (await createRollout(server, side.owner, side.team.id)).rolloutId;
    }
  }
  if (params.has("notificationId")) {
    for (const side of [a, w]) {
      side.notificationId = await createNotification(server, side.owner, side.team.id);
    }
  }
  if (params.has("hookId") || bodies.includes("webhookId")) {
    for (const side of [a, w]) {
      Object.assign(side, await createWebhookWithDelivery(server, side.owner, side.team.id));
    }
  }
  if (params.has("username")) {
    for (const side of [a, w]) {
      side.brokerClient = await createBrokerClient(server, side.owner, side.team.id);
    }
  }
}

const stripLastUsed = (value: unknown): unknown =>
  JSON.parse(
    JSON.stringify(value, (key, v) =>
      // A request's id differs on every reply, whatever else stays the same.
      key === "lastUsedAt" || key === "last_used_at" || key === "requestId" ? undefined : v,
    ),
  );

/** Team A as its owner and the database see it. */
async function snapshotA(operations: DocumentOperation[]) {
  const db = server.db as any;
  const userIds = [a.owner.id, a.member.id];
  const tokens = await db
    .selectFrom("access_tokens")
    .selectAll()
    .where("user_id", "in", userIds)
    .orderBy("id")
    .execute();
  const rows = {
    team: await db.selectFrom("teams").selectAll().where("id", "=", a.team.id).execute(),
    members: await db
      .selectFrom("team_members")
      .selectAll()
      .where("team_id", "=", a.team.id)
      .orderBy("user_id")
      .execute(),
    users: await db
      .selectFrom("users")
      .selectAll()
      .where("id", "in", userIds)
      .orderBy("id")
      .execute(),
    tokens,
    tokenTeams: await db
      .selectFrom("access_token_teams")
      .selectAll()
      .where(
        "token_id",
        "in",
        tokens.map((t: { id: string }) => t.id),
      )
      .orderBy("token_id")
      .execute(),
    invitations: await db
      .selectFrom("invitations")
      .selectAll()
      .where("team_id", "=", a.team.id)
      .orderBy("id")
      .execute(),
    applications: await db
      .selectFrom("applications")
      .selectAll()
      .where("team_id", "=", a.team.id)
      .orderBy("id")
      .execute(),
    instances: await db
      .selectFrom("projects")
      .selectAll()
      .where("team_id", "=", a.team.id)
      .orderBy("id")
      .execute(),
    brokerClients: await db
      .selectFrom("team_broker_clients")
      .selectAll()
      .where("team_id", "=", a.team.id)
      .orderBy("id")
      .execute(),
    pipelines: await db
      .selectFrom("pipelines")
      .selectAll()
      .where("team_id", "=", a.team.id)
      .orderBy("id")
      .execute(),
    stages: await db
      .selectFrom("pipeline_stages as s")
      .innerJoin("pipelines as p", "p.id", "s.pipeline_id")
      .selectAll("s")
      .where("p.team_id", "=", a.team.id)
      .orderBy("s.id")
      .execute(),
    devices: await db
      .selectFrom("devices")
      .selectAll()
      .where("team_id", "=", a.team.id)
      .orderBy("id")
      .execute(),
    deviceGroups: await db
      .selectFrom("device_groups")
      .selectAll()
      .where("team_id", "=", a.team.id)
      .orderBy("id")
      .execute(),
    provisioningTokens: await db
      .selectFrom("device_provisioning_tokens")
      .selectAll()
      .where("team_id", "=", a.team.id)
      .orderBy("id")
      .execute(),
    libraryEntries: await db
      .selectFrom("team_library_entries")
      .selectAll()
      .where("team_id", "=", a.team.id)
      .orderBy("type")
      .orderBy("path")
      .execute(),
    notifications: await db
      .selectFrom("notifications")
      .selectAll()
      .where("user_id", "=", a.owner.id)
      .orderBy("id")
      .execute(),
    auditEntries: (await db.selectFrom("audit_log").select("id").execute()).length,
  };
  // And every team read the owner can make with the team's id alone (team, members, invitations,
  // audit log …), plus their own account and tokens.
  const reads: Record<string, unknown> = {};
  for (const operation of operations) {
    const isTeamRead =
      operation.method === "GET" &&
      operation.pathParams.join() === "teamId" &&
      permissionOf(operation).rule.kind === "team";
    if (!isTeamRead && !["GET /api/v1/user", "GET /api/v1/user/tokens"].includes(operation.name)) {
      continue;
    }
    const path = operation.template.replace("{teamId}", a.team.id);
    try {
      const reply = await server.request("GET", path + requiredQuery(operation, walker.example), {
        token: a.owner.token,
      });
      reads[operation.name] = { status: reply.status, body: reply.body ?? reply.text };
    } catch (error) {
      // The reply does not match the document: reported once, and compared like any reply.
      const message = error instanceof Error ? error.message : String(error);
      snapshotProblems.add(`team A's owner: ${operation.name}: ${message}`);
      reads[operation.name] = { error: message };
    }
  }
  return stripLastUsed({ rows, reads });
}

interface Sent {
  what: string;
  method: string;
  path: string;
  body?: unknown;
  expected: string;
  reply?: Reply;
  problem?: string;
}

async function send(
  record: Omit<Sent, "reply" | "problem">,
  check: (reply: Reply) => string | undefined,
): Promise<Sent> {
  const sent: Sent = { ...record };
  try {
    sent.reply = await server.request(record.method, record.path, {
      token: w.owner.token,
      ...(record.body === undefined ? {} : { body: record.body }),
    });
    sent.problem = check(sent.reply);
  } catch (error) {
    // The harness found the reply does not match the document.
    sent.problem = error instanceof Error ? error.message : String(error);
  }
  return sent;
}

function describeSent(sent: Sent): string {
  const body = sent.body === undefined ? "" : ` ${JSON.stringify(sent.body)}`;
  const reply = sent.reply ? `${sent.reply.status} ${sent.reply.text.slice(0, 300)}` : "no reply";
  return `${sent.what}: ${sent.method} ${sent.path}${body}\n    expected ${sent.expected}, got ${reply}\n    ${sent.problem}`;
}

/** The status a foreign id in the path must get, from the operation's permission kind. */
function expectedForPath(operation: DocumentOperation, foreign: Set<string>): 403 | 404 {
  const { rule } = permissionOf(operation);
  // The walker is no administrator.
  if (rule.kind === "admin") return 403;
  // Another user's account: administrators only, 403 as FlowFuse (the user exists).
  if (rule.kind === "self" && foreign.has("userId")) return 403;
  // A team (or a resource in one) the walker cannot see, or a resource of another user: 404.
  return 404;
}

// Both sides and every resource the walk names are made before the walk: a hook's bound, not the
// walk's, covers the set-up (hundreds of requests, slow on a loaded machine).
let operations: DocumentOperation[];
let before: Awaited<ReturnType<typeof snapshotA>>;
beforeAll(async () => {
  operations = operationsOf(server.document);
  expect(operations.length).toBeGreaterThan(5);

  // Every path parameter is known: team A's resource, or a platform-wide one.
  const unknownParams = operations.flatMap((o) =>
    o.pathParams
      .filter((p) => !(p in PATH_IDS) && !(p in GLOBAL_PATH_PARAMS))
      .map((p) => `${o.name}: {${p}}`),
  );
  expect(
    unknownParams,
    "path parameters the isolation walk does not know: add each to PATH_IDS (create team A's resource through the API in prepare()) or to GLOBAL_PATH_PARAMS (team-fixtures.ts)",
  ).toEqual([]);

  a = await makeSide();
  w = await makeSide();
  await prepare(operations);
  before = await snapshotA(operations);
});

test("the owner of another team gets 404 for team A's ids in every path, 400 for them in every body (and for a required id left out), and changes nothing", async () => {
  const sent: Sent[] = [];
  const changedBy: string[] = [];
  let walkedPaths = 0;
  let walkedBodies = 0;

  for (const operation of operations) {
    const { name, method, template, pathParams } = operation;
    const { rule } = permissionOf(operation);
    const scoped = pathParams.filter((p) => !(p in GLOBAL_PATH_PARAMS));
    const pathWith = (foreign: Set<string>) =>
      template.replace(/\{(\w+)\}/g, (_, param: string) => {
        const global = GLOBAL_PATH_PARAMS[param];
        if (global) return global();
        const whose = foreign.has(param) ? "foreign" : "own";
        const value = PATH_IDS[param]!(whose === "foreign" ? a : w, whose);
        if (!value) throw new Error(`${name}: no ${whose} {${param}}; make one in prepare()`);
        return value;
      });

    const body = walker.bodySchema(operation.operation);
    const hasBody = validBody(walker, operation) !== undefined;
    // An object named like an id (an import's `snapshot`) is content, not a reference.
    const idFields = Object.entries(body?.properties ?? {})
      .filter(([field, schema]) => isIdField(field) && !walker.jsonTypes(schema).has("object"))
      .map(([field]) => field);
    const unknownFields = idFields.filter((f) => !(f in BODY_IDS) && !GLOBAL_BODY_IDS.has(f));
    expect(
      unknownFields,
      `${name}: body id fields the isolation walk does not know: add each to BODY_IDS (team A's value) or GLOBAL_BODY_IDS`,
    ).toEqual([]);
    /** A valid body whose id fields name the walker's own resources. */
    const ownBody = () => {
      const value = validBody(walker, operation)!;
      for (const field of idFields) {
        if (field in value && field in BODY_IDS) value[field] = BODY_IDS[field]!(w);
      }
      return value;
    };
    const query = requiredQuery(operation, walker.example);

    // Team A's ids in the path: all of them, and (with several) each alone among the walker's own.
    if (scoped.length > 0) {
      const variants = [new Set(scoped)];
      if (scoped.length > 1) variants.push(...scoped.map((p) => new Set([p])));
      for (const foreign of variants) {
        const expected = expectedForPath(operation, foreign);
        walkedPaths++;
        sent.push(
          await send(
            {
              what: `${name} with team A's ${[...foreign].map((p) => `{${p}}`).join(", ")}`,
              method,
              path: pathWith(foreign) + query,
              body: hasBody ? ownBody() : undefined,
              expected: String(expected),
            },
            (reply) => (reply.status === expected ? undefined : `expected ${expected}`),
          ),
        );
      }
    }

    // Team A's ids in the body, the path naming the walker's own resources.
    if (hasBody) {
      for (const field of idFields.filter((f) => f in BODY_IDS)) {
        const expected = rule.kind === "admin" ? 403 : UNSEEN_IS_NOT_FOUND.has(name) ? 404 : 400;
        walkedBodies++;
        sent.push(
          await send(
            {
              what: `${name} with team A's id in body field ${field}`,
              method,
              path: pathWith(new Set()) + query,
              body: { ...ownBody(), [field]: BODY_IDS[field]!(a) },
              expected: expected === 400 ? `400 naming ${field}` : String(expected),
            },
            (reply) => {
              if (reply.status !== expected) return `expected ${expected}`;
              if (expected !== 400) return undefined;
              const paths = (reply.body?.errors ?? []).map((e: { path?: string }) => e.path);
              return paths.some((p: unknown) => p === field || String(p).startsWith(`${field}.`))
                ? undefined
                : `the 400's errors[].path ${JSON.stringify(paths)} does not name ${field}`;
            },
          ),
        );
      }
    }

    // A required id left out of the body: a bad request naming it, never a missing resource.
    if (hasBody && rule.kind !== "admin") {
      for (const field of idFields.filter((f) => body?.required?.includes(f))) {
        walkedBodies++;
        const { [field]: _left, ...without } = ownBody();
        sent.push(
          await send(
            {
              what: `${name} without body field ${field}`,
              method,
              path: pathWith(new Set()) + query,
              body: without,
              expected: `400 naming ${field}`,
            },
            (reply) => {
              if (reply.status !== 400) return "expected 400";
              const paths = (reply.body?.errors ?? []).map((e: { path?: string }) => e.path);
              return paths.includes(field)
                ? undefined
                : `the 400's errors[].path ${JSON.stringify(paths)} does not name ${field}`;
            },
          ),
        );
      }
    }

    // After each write, so that a change is named by the operation that made it; reads are
    // checked all together after the walk (a read that writes is found there).
    if (method === "GET") continue;
    const now = await snapshotA(operations);
    if (JSON.stringify(now) !== JSON.stringify(before)) {
      changedBy.push(name);
      expect.soft(now, `team A changed after walking ${name}`).toEqual(before);
    }
  }
  const after = await snapshotA(operations);
  if (changedBy.length === 0 && JSON.stringify(after) !== JSON.stringify(before)) {
    changedBy.push("one of the GET operations");
    expect.soft(after, "team A changed during the walk of the reads").toEqual(before);
  }

  expect.soft(walkedPaths, "operations with team A's ids in the path").toBeGreaterThan(3);
  expect.soft(walkedBodies, "bodies with team A's ids").toBeGreaterThan(1);
  const failures = sent.filter((s) => s.problem);
  expect
    .soft(failures.map(describeSent), `${failures.length} of ${sent.length} requests failed`)
    .toEqual([]);
  expect.soft([...snapshotProblems], "replies to team A's owner").toEqual([]);
  expect(changedBy, "operations after which team A had changed").toEqual([]);
}, 300_000);

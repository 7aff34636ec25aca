// tRPC setup: the request context, procedure metadata, and the one middleware that enforces every
// permission and token scope. Every procedure is built from `procedure` and declares its permission.
import { authorize, type Caller, type Permission, PERMISSIONS } from "@flowplane/auth";
import {
  type AuditEntry,
  type Db,
  findTeamForUser,
  findTeamForUserBySlug,
  type TeamForUser,
  teamOfApplication,
  teamOfDevice,
  teamOfOperation,
  teamOfPipeline,
  teamOfRollout,
  teamOfProject,
  teamOfSnapshot,
  type UserTeamRow,
} from "@flowplane/db";
import { initTRPC } from "@trpc/server";
import { z } from "zod";
import type { FastifyBaseLogger } from "fastify";
import type { OpenApiMeta } from "trpc-to-openapi";
import type { Identity, PreloadedTeam } from "./credentials/identity";
import { Id, TeamIdInput, TeamSlugInput, UserIdInput } from "@flowplane/contract";
import {
  ApiError,
  forbidden,
  invalidRequest,
  notFound,
  toErrorResponse,
  trpcErrorEnvelope,
  unauthorized,
  validationError,
} from "./errors";
import type { ProcedureLimit } from "./limits";

export interface Context {
  db: Db;
  /** The caller: a token and its owner, or a signed-in user. Every procedure runs authenticated. */
  auth: Identity;
  /** A team looked up with the token (REST team routes), so authorization need not query it. */
  preloadedTeam?: PreloadedTeam;
  /** Every team of the caller, read with the token (REST routes whose meta says `preload`). */
  preloadedUserTeams?: UserTeamRow[];
  requestId: string;
  /** The client's address: the socket's, or X-Forwarded-For's past the trusted hops (TRUST_PROXY). */
  clientAddress?: string;
  log: FastifyBaseLogger;
  baseUrl: string;
  tokenSecret: string;
  /** Runs the call within the procedure's own rate limit, if it has one (429 past it). */
  rateLimit?: <T>(
    procedurePath: string,
    limit: ProcedureLimit | undefined,
    run: () => Promise<T>,
  ) => Promise<T>;
  /** Where clients reach the team broker, for GET /settings (none: no broker). */
  brokerEndpoint?: { host: string; url: string };
  /** Told after every mutation that succeeded (never awaited: the reply does not wait). */
  afterMutation?: (() => void)[];
  // Areas add what their procedures need of their runtime (`declare module`): the team broker's
  // access service (broker/access.ts), the instance runtime (instances/runtime.ts).
}

export type Meta = OpenApiMeta<{
  permission: Permission;
  /** Its own rate limit, beyond the global one (plugins/rate-limits.ts counts it). */
  rateLimit?: ProcedureLimit;
  /** HTTP status of a successful REST reply (default 200). 204 replies have no body. */
  successStatus?: 200 | 201 | 204;
  /** Error statuses beyond those that follow from the permission and the input (e.g. 409). */
  errors?: number[];
  /** Open to a signed-in user whose password has expired (who must change it first). */
  allowExpiredPassword?: boolean;
  /**
   * The REST reply's media type when it is not JSON: the procedure's output is then the body's
   * text (e.g. a CSV export), sent as it is. Over /trpc it stays a JSON string.
   */
  contentType?: "text/csv";
  /**
   * Also open to a provisioning token (`fpv_…`, only POST /api/v1/devices): the team the input
   * names must be the token's own.
   */
  provisioning?: boolean;
  /**
   * Also open to a device's one-time code (only POST /api/v1/devices with `setup: true`): no team
   * is involved, the handler finds the device by its code.
   */
  deviceSetup?: boolean;
  /**
   * A body that is one of several requests (FlowFuse's POST /devices: a creation, or the agent's
   * setup), documented as `oneOf` them: each mode's fields and those it requires. The input's
   * schema has every field and checks the modes itself.
   */
  bodyModes?: { description: string; fields: string[]; required: string[] }[];
  /**
   * A DELETE whose input (beyond the path's) is a JSON body, as FlowFuse's bulk deletion of
   * devices, not query parameters: the REST route reads the body and the document says so.
   */
  bodyOnDelete?: true;
  /**
   * Data the REST route's authentication reads in the same query as the token, so that the
   * procedure needs no second round trip: `userTeams`, every team of the caller (GET /user/teams).
   */
  preload?: "userTeams";
  /**
   * A resource the body names that the caller cannot see (another team's, or none) is 404, as
   * FlowFuse answers it (POST /pipelines: `applicationId`), not 400 naming the field.
   */
  unseenIsNotFound?: boolean;
  /**
   * The code of the 400 for a `team` field missing or not an id (FlowFuse's search answers a bad
   * team with `bad_request`); else it is `invalid_request` naming the field.
   */
  badTeamCode?: string;
  /**
   * Writes that don't collide (core/writes.ts): on a GET, the reply carries the resource's
   * `ETag`; on its PUT, PATCH or DELETE, `If-Match` is honoured (412 when it does not match).
   */
  etag?: true;
  /**
   * A create (core/writes.ts): `Idempotency-Key` answers a retry the first outcome (`replay`),
   * or is refused with 400 where the answer carries a secret shown once (`secret`).
   */
  create?: "replay" | "secret";
}>;

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    // tRPC's own envelope stays (its clients rely on it), with our code and no stack trace.
    errorFormatter({ shape, error, ctx }) {
      const { status, body } = toErrorResponse(error, ctx?.requestId ?? "");
      return { ...trpcErrorEnvelope(status, body).error, code: shape.code };
    },
  });

export const router = t.router;

/**
 * Input fields that name a resource of a team, in the order they are looked for: the team of the
 * first one the input has is the one the permission is checked in. (A snapshot named beside its
 * instance is checked to be the instance's by the handler.)
 */
const OWNED_BY: {
  name: string;
  applies: (raw: Record<string, unknown>) => boolean;
  teamOf: (db: Db, id: string, raw: Record<string, unknown>) => Promise<string | undefined>;
}[] = [
  // Before instanceId: a stage's body names its instance, checked against the pipeline's.
  { name: "rolloutId", applies: (raw) => "rolloutId" in raw, teamOf: teamOfRollout },
  { name: "pipelineId", applies: (raw) => "pipelineId" in raw, teamOf: teamOfPipeline },
  { name: "operationId", applies: (raw) => "operationId" in raw, teamOf: teamOfOperation },
  { name: "instanceId", applies: (raw) => "instanceId" in raw, teamOf: teamOfProject },
  { name: "deviceId", applies: (raw) => "deviceId" in raw, teamOf: teamOfDevice },
  { name: "applicationId", applies: (raw) => "applicationId" in raw, teamOf: teamOfApplication },
  { name: "snapshotId", applies: (raw) => "snapshotId" in raw, teamOf: teamOfSnapshot },
  // POST /snapshots/import: the owner it goes to, of the type `ownerType` names.
  {
    name: "ownerId",
    applies: (raw) => "ownerId" in raw,
    teamOf: async (db, id, raw) => {
      if (raw.ownerType === "instance") return teamOfProject(db, id);
      if (raw.ownerType === "device") return teamOfDevice(db, id);
      throw invalidRequest("Invalid request: ownerType: not a type of owner", [
        { path: "ownerType", message: "Must be `instance` or `device`" },
      ]);
    },
  },
];

// Made once: a zod object made per request is compiled again on its first parse, every request.
const TEAM_FIELD_SCHEMAS = {
  teamId: z.object({ teamId: TeamIdInput.shape.teamId }),
  team: z.object({ team: TeamIdInput.shape.teamId }),
};
const OwnedId = z.object({ id: Id });

/**
 * Checks the procedure's permission against the caller's role and token scope. For team
 * permissions it loads the team named by `teamId` in the input — or by `slug` when there is no
 * `teamId` (`GET /teams/slug/{slug}`), or the team of the instance (`instanceId`) or application
 * (`applicationId`) the input names — once: handlers get it in `ctx.team`. Runs before input validation, so nothing about a team the caller cannot see leaks
 * through a validation message.
 */
const authorized = t.middleware(async ({ ctx, meta, getRawInput, next }) => {
  const permission = meta?.permission;
  if (!permission) throw new Error("procedure declares no permission");
  // A token's identity is the caller: its owner's id and admin flag, narrowed by its scope.
  const caller: Caller = ctx.auth;
  if (ctx.auth.passwordExpired && !meta.allowExpiredPassword) {
    throw forbidden("Your password has expired: choose a new one first", "password_expired");
  }

  if (ctx.auth.otc) {
    // A device's one-time code sets up its device, and does nothing else.
    if (!meta.deviceSetup) throw unauthorized();
    return next({ ctx: { team: undefined } });
  }

  const raw = await getRawInput();
  // A route that names a user: `self` permissions allow that user (or an administrator).
  let subject: { userId: string } | undefined;
  if (typeof raw === "object" && raw !== null && "userId" in raw) {
    const parsed = UserIdInput.safeParse({ userId: raw.userId });
    if (!parsed.success) throw validationError(parsed.error);
    subject = parsed.data;
  }

  if (PERMISSIONS[permission].kind !== "team") {
    const decision = authorize(permission, caller, undefined, subject);
    if (!decision.allowed) {
      throw decision.status === 404 ? notFound() : forbidden(decision.message);
    }
    return next({ ctx: { team: undefined } });
  }

  // The field that named the team; when it is in the body (not the path), a team or resource the
  // caller cannot see is a bad field (400 naming it), not a missing resource.
  let namedBy: string | undefined;
  let teamId: string | undefined;
  // `team` is FlowFuse's name for it in a device's body (POST /devices).
  const teamField =
    typeof raw === "object" && raw !== null
      ? "teamId" in raw
        ? "teamId"
        : "team" in raw
          ? "team"
          : undefined
      : undefined;
  if (teamField !== undefined) {
    namedBy = teamField;
    // Checked before the lookup: a value the database cannot hold must not reach a query.
    const value = (raw as Record<string, unknown>)[teamField];
    const parsed = TEAM_FIELD_SCHEMAS[teamField].safeParse({ [teamField]: value });
    if (!parsed.success) {
      const error = validationError(parsed.error);
      if (meta.badTeamCode) throw new ApiError(400, meta.badTeamCode, error.message, error.fields);
      throw error;
    }
    teamId = value as string;
  } else if (meta.badTeamCode) {
    throw new ApiError(400, meta.badTeamCode, "Invalid request: team: Required", [
      { path: "team", message: "Required" },
    ]);
  }
  // Applications, instances and snapshots belong to a team: the check is the team's (404 when
  // none). The first field of OWNED_BY that the input has names the resource.
  let owned = false;
  if (teamId === undefined && typeof raw === "object" && raw !== null) {
    const field = OWNED_BY.find((entry) => entry.applies(raw as Record<string, unknown>));
    if (field) {
      namedBy = field.name;
      const parsed = OwnedId.safeParse({ id: (raw as Record<string, unknown>)[field.name] });
      if (!parsed.success) {
        throw validationError(
          new z.ZodError(parsed.error.issues.map((issue) => ({ ...issue, path: [field.name] }))),
        );
      }
      teamId = await field.teamOf(ctx.db, parsed.data.id, raw as Record<string, unknown>);
      owned = true;
    }
  }
  const named = namedBy !== undefined || (typeof raw === "object" && raw !== null && "slug" in raw);
  if (!named) {
    // Nothing names a team (`POST /applications {}`): nothing about any team can leak, so the
    // input's schema says which field is missing (400), and a handler asking for the team
    // (`teamOf`) refuses a schema that let it through.
    return next({ ctx: { team: undefined } });
  }
  let found: TeamForUser | undefined;
  if (owned && teamId === undefined) {
    found = undefined;
  } else if (teamId !== undefined) {
    found =
      ctx.preloadedTeam?.teamId === teamId
        ? ctx.preloadedTeam.found
        : await findTeamForUser(ctx.db, teamId, ctx.auth.userId);
  } else if (typeof raw === "object" && raw !== null && "slug" in raw) {
    // A team named by its slug (`GET /teams/slug/{slug}`): the same checks, found by slug.
    const parsed = TeamSlugInput.safeParse({ slug: raw.slug });
    if (!parsed.success) throw validationError(parsed.error);
    found = await findTeamForUserBySlug(ctx.db, parsed.data.slug, ctx.auth.userId);
  }
  if (ctx.auth.provisioning) {
    // A provisioning token acts in its own team, on the operations that say so, and nowhere else.
    if (!meta.provisioning) throw unauthorized();
    if (found?.team.id !== ctx.auth.provisioning.teamId) {
      throw invalidRequest(`Invalid request: ${namedBy ?? "team"}: not the token's team`, [
        { path: namedBy ?? "team", message: "Not the provisioning token's team" },
      ]);
    }
    return next({ ctx: { team: found } });
  }
  const decision = authorize(
    permission,
    caller,
    { id: found?.team.id ?? "", exists: found !== undefined, membershipRole: found?.role },
    subject,
  );
  if (!decision.allowed) {
    if (decision.status !== 404) throw forbidden();
    if (
      namedBy === undefined ||
      meta.unseenIsNotFound ||
      meta.openapi?.path.includes(`{${namedBy}}`)
    ) {
      throw notFound();
    }
    throw invalidRequest(`Invalid request: ${namedBy}: no such resource`, [
      { path: namedBy, message: "No such resource, or not yours" },
    ]);
  }
  return next({ ctx: { team: found } });
});

/**
 * A procedure's own rate limit (plugins/rate-limits.ts), after its permission: the same count
 * whether the call comes through REST, /trpc or a page.
 */
const rateLimited = t.middleware(async ({ ctx, path, meta, next }) => {
  if (!ctx.rateLimit) return next();
  return ctx.rateLimit(path, meta?.rateLimit, async () => {
    const result = await next();
    // tRPC hands a failure back rather than throwing it; thrown, the limit sees what failed.
    if (!result.ok) throw result.error;
    return result;
  });
});

/**
 * After a mutation that succeeded, whatever follows the database's state catches up at once (the
 * devices' channel pushes a changed target to connected devices): every mutation, so that an
 * operation declared tomorrow is covered the moment it is.
 */
const followed = t.middleware(async ({ ctx, type, next }) => {
  const result = await next();
  if (type === "mutation" && result.ok) for (const changed of ctx.afterMutation ?? []) changed();
  return result;
});

/**
 * A REST create under an `Idempotency-Key` (core/rest.ts, core/writes.ts): its key claimed, or its
 * kept outcome replayed, only once the caller is authorized — a caller removed from the team, or
 * a token restricted since, gets the refusal, not an earlier create's answer.
 */
const keyed = t.middleware(async ({ ctx, next }) => {
  await ctx.http?.beforeCreate?.();
  return next();
});

export const procedure = t.procedure.use(authorized).use(keyed).use(rateLimited).use(followed);

/**
 * Who acted, for the audit log: the user, with the token they used (null in a browser) and the
 * address the request came from.
 */
export function actorOf(ctx: { auth: Identity; clientAddress?: string }): AuditEntry["actor"] {
  // A provisioning token or a one-time code has no user: the platform acted, on their behalf.
  if (ctx.auth.provisioning || ctx.auth.otc) return "system";
  return {
    userId: ctx.auth.userId,
    tokenId: ctx.auth.tokenId,
    ...(ctx.clientAddress && { ip: ctx.clientAddress }),
  };
}

/** The team a team procedure's middleware loaded. */
export function teamOf(ctx: { team: TeamForUser | undefined }) {
  if (!ctx.team) throw invalidRequest("Invalid request: no team, application or instance named");
  return ctx.team;
}

// Teams: create, list (administrators), read and rename; the rest of a team's life is in
// team-lifecycle.ts.
import { actsAsAdmin, type Caller, randomBase62 } from "@flowplane/auth";
import {
  CreateTeamInput,
  LIST_COUNT_CAP,
  ListTeamsInput,
  Role,
  Team,
  TeamIdInput,
  TeamList,
  UpdateTeamInput,
} from "@flowplane/contract";
import {
  type Db,
  defaultTeamType,
  findTeamType,
  insertTeam,
  isForeignKeyViolation,
  isUniqueViolation,
  listTeams,
  platformSettings,
  slugExists,
  updateTeam,
} from "@flowplane/db";
import { ApiError, forbidden, invalidRequest, notFound } from "../core/errors";
import { actorOf, procedure, router, teamOf } from "../core/trpc";
import { checkIfMatch, setETag } from "../core/writes";
import { teamLifecycleProcedures } from "./lifecycle";
import { recordTeamCreated, teamEntry } from "./events";
import { teamView } from "./views";

/** FlowFuse's rule: with `team:create` off, only administrators create teams (else 403). */
async function mayCreateTeams(ctx: { db: Db; auth: Caller }): Promise<void> {
  if (actsAsAdmin(ctx.auth)) return;
  if (!(await platformSettings(ctx.db))["team:create"]) {
    throw forbidden("Only administrators may create teams on this platform");
  }
}

const slugTaken = () => new ApiError(409, "invalid_slug", "Slug is already in use");

const invalidTeamType = (message: string) =>
  new ApiError(400, "invalid_team_type", message, [{ path: "type", message }]);

/** The type a new team gets: the one chosen, which must be active, or else the default. */
async function typeFor(db: Db, typeId: string | undefined) {
  const type = typeId === undefined ? await defaultTeamType(db) : await findTeamType(db, typeId);
  if (!type) {
    throw invalidTeamType(typeId === undefined ? "No active team type" : "Unknown team type");
  }
  if (!type.active) throw invalidTeamType("The team type is not active");
  return type;
}

/** A URL-safe slug from a team name, made unique with a short random suffix when taken. */
async function slugFor(db: Db, name: string): Promise<string> {
  const base =
    name
      .toLowerCase()
      .normalize("NFKD")
      .replace(/[^a-z0-9_-]+/g, "-")
      .replace(/-+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 55) || "team";
  let slug = base === "create" ? "create-team" : base;
  while (await slugExists(db, slug)) slug = `${base}-${randomBase62(6).toLowerCase()}`;
  return slug;
}

export const teamRouter = router({
  ...teamLifecycleProcedures,
  create: procedure
    .meta({
      create: "replay",
      permission: "team:create",
      errors: [409],
      openapi: {
        method: "POST",
        path: "/api/v1/teams",
        tags: ["Teams"],
        summary: "Create a team; the caller becomes its owner",
        description:
          "When the platform's `team:create` setting is off, only administrators create teams (403). `type` is an active team type's id; without it the team gets the active type with the lowest `order` (FlowFuse requires it). An unknown or inactive type is 400 `invalid_team_type`; a taken `slug` is 409 `invalid_slug`.",
      },
    })
    .input(CreateTeamInput)
    .output(Team)
    .mutation(async ({ ctx, input }) => {
      await mayCreateTeams(ctx);
      const type = await typeFor(ctx.db, input.type);
      const slug = input.slug ?? (await slugFor(ctx.db, input.name));
      try {
        const team = await ctx.db.transaction().execute(async (trx) => {
          const team = await insertTeam(trx, {
            name: input.name,
            slug,
            ownerId: ctx.auth.userId,
            ownerRole: Role.owner,
            typeId: type.id,
          });
          await recordTeamCreated(trx, actorOf(ctx), team, { id: type.id, name: type.name });
          return team;
        });
        return teamView(team, ctx.baseUrl);
      } catch (error) {
        if (isUniqueViolation(error)) throw slugTaken();
        // The type was deleted between the check and the insert.
        if (isForeignKeyViolation(error)) throw invalidTeamType("Unknown team type");
        throw error;
      }
    }),

  all: procedure
    .meta({
      permission: "team:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams",
        tags: ["Teams"],
        summary: "Every team on the platform (administrators, with an admin opt-in token)",
      },
    })
    .input(ListTeamsInput)
    .output(TeamList)
    .query(async ({ ctx, input }) => {
      const page = await listTeams(ctx.db, input, LIST_COUNT_CAP);
      return {
        meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
        count: page.total,
        teams: page.teams.map((row) => teamView(row, ctx.baseUrl)),
      };
    }),

  byId: procedure
    .meta({
      permission: "team:read",
      etag: true,
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}",
        tags: ["Teams"],
        summary: "One team",
        description: "A team you are not a member of is 404, as one that does not exist.",
      },
    })
    .input(TeamIdInput)
    .output(Team)
    .query(({ ctx }) => {
      const { team } = teamOf(ctx);
      setETag(ctx, team.version);
      return teamView(team, ctx.baseUrl);
    }),

  update: procedure
    .meta({
      permission: "team:edit",
      errors: [409],
      etag: true,
      openapi: {
        method: "PUT",
        path: "/api/v1/teams/{teamId}",
        tags: ["Teams"],
        summary: "Rename a team (owners)",
        description:
          "Changes `name`, `slug` or both; at least one is required. A taken `slug` is 409 `invalid_slug`.",
      },
    })
    .input(UpdateTeamInput)
    .output(Team)
    .mutation(async ({ ctx, input }) => {
      const { team: before } = teamOf(ctx);
      if (input.name === undefined && input.slug === undefined) {
        throw invalidRequest("Nothing to change: give a name or a slug", [
          { path: "", message: "Give name or slug" },
        ]);
      }
      const updates = (["name", "slug"] as const)
        .filter((key) => input[key] !== undefined && input[key] !== before[key])
        .map((key) => ({ key, old: before[key], new: input[key]! }));
      const rename = async (db: Db) => {
        if (updates.length === 0) {
          setETag(ctx, before.version);
          return teamView(before, ctx.baseUrl);
        }
        try {
          const team = await updateTeam(
            db,
            before.id,
            Object.fromEntries(updates.map((u) => [u.key, u.new])),
            teamEntry("team.settings.updated", before.id, actorOf(ctx), { updates }),
          );
          if (!team) throw notFound();
          setETag(ctx, team.version);
          return teamView(team, ctx.baseUrl);
        } catch (error) {
          if (isUniqueViolation(error)) throw slugTaken();
          throw error;
        }
      };
      // One statement, unless an If-Match must hold until it commits (core/writes.ts).
      if (ctx.http?.ifMatch === undefined) return rename(ctx.db);
      return ctx.db.transaction().execute(async (trx) => {
        await checkIfMatch(trx, ctx, "teams", before.id);
        return rename(trx);
      });
    }),
});

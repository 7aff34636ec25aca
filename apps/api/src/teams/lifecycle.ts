// Teams beyond create/read/rename: by slug, whether a slug is free, the caller's place in a team,
// and deleting a team with everything in it. Part of the team router (`team.*`).
import { type Permission, PERMISSIONS } from "@flowplane/auth";
import {
  CheckSlugInput,
  Role,
  Status,
  Team,
  TeamIdInput,
  TeamMembership,
  TeamSlugInput,
} from "@flowplane/contract";
import {
  brokerClientUsernames,
  deleteTeam,
  listProjects,
  lockTeam,
  slugExists,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { actorOf, procedure, teamOf } from "../core/trpc";
import { checkIfMatch } from "../core/writes";
import { recordTeamDeleted } from "./events";
import { teamView } from "./views";

/** The team permissions a role grants, from the matrix (in its order). */
export function teamPermissionsOf(level: number): Permission[] {
  return (Object.keys(PERMISSIONS) as Permission[]).filter((name) => {
    const rule = PERMISSIONS[name];
    return rule.kind === "team" && level >= rule.role;
  });
}

export const teamLifecycleProcedures = {
  bySlug: procedure
    .meta({
      permission: "team:read",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/slug/{slug}",
        tags: ["Teams"],
        summary: "One team, by its slug",
        description: "As `GET /api/v1/teams/{teamId}`: a team you are not a member of is 404.",
      },
    })
    .input(TeamSlugInput)
    .output(Team)
    .query(({ ctx }) => teamView(teamOf(ctx).team, ctx.baseUrl)),

  checkSlug: procedure
    .meta({
      permission: "team:create",
      errors: [409],
      openapi: {
        method: "POST",
        path: "/api/v1/teams/check-slug",
        tags: ["Teams"],
        summary: "Whether a slug is free for a new team",
        description: "200 when free; 409 `invalid_slug` when a team has it.",
      },
    })
    .input(CheckSlugInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      if (await slugExists(ctx.db, input.slug)) {
        throw new ApiError(409, "invalid_slug", "Slug is already in use");
      }
      return { status: "okay" as const };
    }),

  membership: procedure
    .meta({
      permission: "team:read",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/user",
        tags: ["Teams"],
        summary: "Your role in the team, and the team permissions it grants",
        description:
          "`permissions` lists the permission matrix's team permissions the role grants (what a token's scope allows, e.g. read-only, is not taken into account). An administrator acting as one who is not a member gets role 99.",
      },
    })
    .input(TeamIdInput)
    .output(TeamMembership)
    .query(({ ctx }) => {
      // Authorization let the caller in: a member, or else an administrator acting as one.
      const role = teamOf(ctx).role ?? Role.admin;
      return { role, permissions: teamPermissionsOf(role) };
    }),

  delete: procedure
    .meta({
      permission: "team:delete",
      etag: true,
      openapi: {
        method: "DELETE",
        path: "/api/v1/teams/{teamId}",
        tags: ["Teams"],
        summary: "Delete a team and everything in it (owners)",
        description:
          "Removes the team with its memberships, invitations, broker clients, applications and instances in one transaction; the clients' live MQTT sessions end at once, and the instances' Node-RED processes and files are removed. Tokens restricted to the team lose it: one restricted to this team alone then reaches no team. `team.deleted` is logged in the team's audit log, which administrators can still read.",
      },
    })
    .input(TeamIdInput)
    .output(Status)
    .mutation(async ({ ctx }) => {
      const { team } = teamOf(ctx);
      const { brokerClients, instances } = await ctx.db.transaction().execute(async (trx) => {
        // The team's row first: an instance being created (which locks it too) is either in the
        // list below or finds no team, so none is left running without a row.
        if (!(await lockTeam(trx, team.id))) throw notFound();
        await checkIfMatch(trx, ctx, "teams", team.id);
        const instances = (await listProjects(trx, { teamId: team.id })).map((p) => p.id);
        const usernames = await brokerClientUsernames(trx, team.id);
        const deleted = await deleteTeam(trx, team.id);
        if (!deleted) throw notFound();
        await recordTeamDeleted(trx, actorOf(ctx), deleted);
        return { brokerClients: usernames, instances };
      });
      for (const username of brokerClients) {
        ctx.broker?.changed({ teamId: team.id, username, disconnect: true });
      }
      await ctx.instances?.discard(instances);
      return { status: "okay" as const };
    }),
};

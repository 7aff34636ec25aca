// A team's provisioning tokens (owners): a device agent started with one registers itself as a
// new device of the team (POST /api/v1/devices), assigned to the token's application or instance.
// The token does nothing else; deleted or expired, it creates nothing more.
import { generateToken, tokenDigest } from "@flowplane/auth";
import {
  CreatedProvisioningToken,
  CreateProvisioningTokenInput,
  ProvisioningTokenIdInput,
  ProvisioningTokenList,
  ProvisioningTokenSummary,
  Status,
  TeamIdInput,
  UpdateProvisioningTokenInput,
} from "@flowplane/contract";
import {
  type Db,
  deleteProvisioningToken,
  findApplication,
  findProject,
  findProvisioningToken,
  insertProvisioningToken,
  listProvisioningTokens,
  type ProvisioningTokenRow,
  updateProvisioningToken,
} from "@flowplane/db";
import { notFound } from "../core/errors";
import { actorOf, procedure, router, teamOf } from "../core/trpc";
import { recordProvisioningTokenEvent } from "./events";
import { invalidField } from "./moves";

const TAG = "Devices";

function summary(row: ProvisioningTokenRow) {
  return {
    id: row.id,
    name: row.name,
    team: row.team_id,
    ...(row.application_id && { application: row.application_id }),
    ...(row.project_id && { instance: row.project_id }),
    expiresAt: row.expires_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  };
}

/** The token's application or instance, checked to be the team's (400 naming the field). */
async function assignment(
  db: Db,
  teamId: string,
  wanted: { application?: string | null; instance?: string | null },
) {
  const change: { applicationId?: string | null; projectId?: string | null } = {};
  if (wanted.application) {
    const application = await findApplication(db, wanted.application);
    if (!application || application.team_id !== teamId) {
      throw invalidField("application", "invalid_application", "No such application in the team");
    }
    change.applicationId = application.id;
    change.projectId = null;
  } else if (wanted.application === null) change.applicationId = null;
  if (wanted.instance) {
    if (wanted.application) {
      throw invalidField("instance", "invalid_request", "An application or an instance, not both");
    }
    const project = await findProject(db, wanted.instance);
    if (!project || project.team_id !== teamId) {
      throw invalidField("instance", "invalid_instance", "No such instance in the team");
    }
    change.projectId = project.id;
    change.applicationId = null;
  } else if (wanted.instance === null) change.projectId = null;
  return change;
}

export const provisioningRouter = router({
  list: procedure
    .meta({
      permission: "team:device:provisioning-token:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/devices/provisioning",
        tags: [TAG],
        summary: "The team's provisioning tokens (owners)",
        description: "Their values are never shown again after creation.",
      },
    })
    .input(TeamIdInput)
    .output(ProvisioningTokenList)
    .query(async ({ ctx, input }) => {
      const rows = await listProvisioningTokens(ctx.db, input.teamId);
      return { meta: {}, count: rows.length, tokens: rows.map(summary) };
    }),

  create: procedure
    .meta({
      create: "secret",
      permission: "team:device:provisioning-token:create",
      openapi: {
        method: "POST",
        path: "/api/v1/teams/{teamId}/devices/provisioning",
        tags: [TAG],
        summary: "Create a provisioning token (owners)",
        description:
          "The reply's `token` (`fpv_…`) is shown once. Give it to device agents in `device.yml` as `provisioningToken`, with `provisioningTeam` (the team's id) and `provisioningMode: true`: each agent then registers itself as a new device of the team, assigned to `application` or `instance` when the token names one. The token reaches nothing but that registration.",
      },
    })
    .input(CreateProvisioningTokenInput)
    .output(CreatedProvisioningToken)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const token = generateToken("provisioning");
      const row = await ctx.db.transaction().execute(async (trx) => {
        const change = await assignment(trx, teamId, input);
        const row = await insertProvisioningToken(trx, {
          teamId,
          name: input.name,
          digest: tokenDigest(ctx.tokenSecret, token),
          applicationId: change.applicationId ?? null,
          projectId: change.projectId ?? null,
          expiresAt: input.expiresAt ? new Date(input.expiresAt) : null,
        });
        await recordProvisioningTokenEvent(trx, "created", actorOf(ctx), teamId, row);
        return row;
      });
      return { ...summary(row), token };
    }),

  update: procedure
    .meta({
      permission: "team:device:provisioning-token:edit",
      openapi: {
        method: "PUT",
        path: "/api/v1/teams/{teamId}/devices/provisioning/{tokenId}",
        tags: [TAG],
        summary: "Change a provisioning token's assignment or expiry (owners)",
        description: "Its name cannot change. `null` clears a field; absent fields are unchanged.",
      },
    })
    .input(UpdateProvisioningTokenInput)
    .output(ProvisioningTokenSummary)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const row = await ctx.db.transaction().execute(async (trx) => {
        if (!(await findProvisioningToken(trx, teamId, input.tokenId))) {
          throw notFound("Token not found");
        }
        const change = await assignment(trx, teamId, input);
        const row = await updateProvisioningToken(trx, teamId, input.tokenId, {
          ...change,
          ...(input.expiresAt !== undefined && {
            expiresAt: input.expiresAt === null ? null : new Date(input.expiresAt),
          }),
        });
        if (!row) throw notFound("Token not found");
        await recordProvisioningTokenEvent(trx, "updated", actorOf(ctx), teamId, row);
        return row;
      });
      return summary(row);
    }),

  delete: procedure
    .meta({
      permission: "team:device:provisioning-token:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/teams/{teamId}/devices/provisioning/{tokenId}",
        tags: [TAG],
        summary: "Revoke a provisioning token (owners)",
        description: "It creates no device from now on; devices it created stay.",
      },
    })
    .input(ProvisioningTokenIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      await ctx.db.transaction().execute(async (trx) => {
        const row = await deleteProvisioningToken(trx, teamId, input.tokenId);
        if (!row) throw notFound("Token not found");
        await recordProvisioningTokenEvent(trx, "deleted", actorOf(ctx), teamId, row);
      });
      return { status: "okay" as const };
    }),
});

// Applications (FlowFuse's /applications): a team's groups of instances. Owners create, rename and
// delete them (not while they hold instances); viewers and up read them and list their instances.
import {
  Application,
  ApplicationIdInput,
  CreateApplicationInput,
  InstanceList,
  InstanceStatusList,
  Status,
  TeamApplicationList,
  TeamApplicationStatusList,
  TeamIdInput,
  UpdateApplicationInput,
} from "@flowplane/contract";
import {
  type ApplicationRow,
  countApplicationProjects,
  deleteApplication,
  findApplication,
  insertApplication,
  listProjects,
  listTeamApplications,
  listTeamProjectSummaries,
  type ProjectSummaryRow,
  type TeamForUser,
  updateApplication,
} from "@flowplane/db";
import { ApiError, invalidRequest, notFound } from "../core/errors";
import { actorOf, type Context, procedure, router, teamOf } from "../core/trpc";
import { checkIfMatch, setETag } from "../core/writes";
import { recordApplicationEvent } from "./events";
import { instanceCountsProcedures } from "./instance-counts";
import { instanceStatusOf, instanceSummary } from "../instances/index";
import { teamSummary } from "../teams/index";

const TAG = "Applications";

export function applicationSummary(
  row: Pick<ApplicationRow, "id" | "name" | "description">,
  baseUrl: string,
) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    links: { self: `${baseUrl}/api/v1/applications/${row.id}` },
  };
}

function applicationView(row: ApplicationRow, ctx: Context & { team: TeamForUser | undefined }) {
  const { team } = teamOf(ctx);
  return {
    ...applicationSummary(row, ctx.baseUrl),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    team: teamSummary(team, ctx.baseUrl),
  };
}

/** The application the input names, in the team the permission check loaded. */
async function applicationOf(ctx: Context, applicationId: string): Promise<ApplicationRow> {
  const row = await findApplication(ctx.db, applicationId);
  if (!row) throw notFound();
  return row;
}

/** The team's applications by name, each with its instances as `view` shows them. */
async function teamApplications<T>(
  ctx: Context & { team: TeamForUser | undefined },
  view: (project: ProjectSummaryRow) => Promise<T>,
) {
  const teamId = teamOf(ctx).team.id;
  const [applications, projects] = await Promise.all([
    listTeamApplications(ctx.db, teamId),
    listTeamProjectSummaries(ctx.db, teamId),
  ]);
  return Promise.all(
    applications.map(async (application) => ({
      application,
      instances: await Promise.all(
        projects.filter((project) => project.application_id === application.id).map(view),
      ),
    })),
  );
}

export const applicationsRouter = router({
  ...instanceCountsProcedures,
  create: procedure
    .meta({
      create: "replay",
      permission: "project:create",
      openapi: {
        method: "POST",
        path: "/api/v1/applications",
        tags: [TAG],
        summary: "Create an application in a team (owners)",
      },
    })
    .input(CreateApplicationInput)
    .output(Application)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const row = await ctx.db.transaction().execute(async (trx) => {
        const row = await insertApplication(trx, {
          teamId,
          name: input.name,
          description: input.description ?? null,
        });
        await recordApplicationEvent(trx, "created", actorOf(ctx), row);
        return row;
      });
      return applicationView(row, ctx);
    }),

  get: procedure
    .meta({
      permission: "project:read",
      etag: true,
      openapi: {
        method: "GET",
        path: "/api/v1/applications/{applicationId}",
        tags: [TAG],
        summary: "An application (viewers and up)",
      },
    })
    .input(ApplicationIdInput)
    .output(Application)
    .query(async ({ ctx, input }) => {
      const application = await applicationOf(ctx, input.applicationId);
      setETag(ctx, application.version);
      return applicationView(application, ctx);
    }),

  update: procedure
    .meta({
      permission: "project:edit",
      etag: true,
      openapi: {
        method: "PUT",
        path: "/api/v1/applications/{applicationId}",
        tags: [TAG],
        summary: "Rename or describe an application (owners)",
        description: "Changes the fields given, at least one.",
      },
    })
    .input(UpdateApplicationInput)
    .output(Application)
    .mutation(async ({ ctx, input }) => {
      const { applicationId, ...change } = input;
      if (change.name === undefined && change.description === undefined) {
        throw invalidRequest("Nothing to change: give name or description", [
          { path: "", message: "Give name or description" },
        ]);
      }
      const row = await ctx.db.transaction().execute(async (trx) => {
        await checkIfMatch(trx, ctx, "applications", applicationId);
        const before = await findApplication(trx, applicationId);
        if (!before) throw notFound();
        const after = await updateApplication(trx, applicationId, change);
        if (!after) throw notFound();
        const updates = (["name", "description"] as const)
          .filter((key) => change[key] !== undefined && before[key] !== after[key])
          .map((key) => ({ key, old: before[key], new: after[key] }));
        if (updates.length > 0) {
          await recordApplicationEvent(trx, "updated", actorOf(ctx), after, { updates });
        }
        return after;
      });
      setETag(ctx, row.version);
      return applicationView(row, ctx);
    }),

  delete: procedure
    .meta({
      permission: "project:delete",
      errors: [422],
      etag: true,
      openapi: {
        method: "DELETE",
        path: "/api/v1/applications/{applicationId}",
        tags: [TAG],
        summary: "Delete an application (owners)",
        description: "Only an empty one: while it holds instances, 422 `invalid_application`.",
      },
    })
    .input(ApplicationIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      await ctx.db.transaction().execute(async (trx) => {
        await checkIfMatch(trx, ctx, "applications", input.applicationId);
        const before = await findApplication(trx, input.applicationId);
        if (!before) throw notFound();
        if ((await countApplicationProjects(trx, before.id)) > 0) {
          throw new ApiError(
            422,
            "invalid_application",
            "The application still has instances: delete them first",
          );
        }
        await deleteApplication(trx, before.id);
        await recordApplicationEvent(trx, "deleted", actorOf(ctx), before);
      });
      return { status: "okay" as const };
    }),

  instances: procedure
    .meta({
      permission: "team:projects:list",
      openapi: {
        method: "GET",
        path: "/api/v1/applications/{applicationId}/instances",
        tags: [TAG],
        summary: "The application's instances (viewers and up)",
      },
    })
    .input(ApplicationIdInput)
    .output(InstanceList)
    .query(async ({ ctx, input }) => {
      await applicationOf(ctx, input.applicationId);
      const rows = await listProjects(ctx.db, { applicationId: input.applicationId });
      const instances = await Promise.all(rows.map((row) => instanceSummary(row, ctx)));
      return { count: instances.length, instances };
    }),

  instancesStatus: procedure
    .meta({
      permission: "team:projects:list",
      openapi: {
        method: "GET",
        path: "/api/v1/applications/{applicationId}/instances/status",
        tags: [TAG],
        summary: "The state of the application's instances (viewers and up)",
      },
    })
    .input(ApplicationIdInput)
    .output(InstanceStatusList)
    .query(async ({ ctx, input }) => {
      await applicationOf(ctx, input.applicationId);
      const rows = await listProjects(ctx.db, { applicationId: input.applicationId });
      const instances = await Promise.all(
        rows.map(async (row) => ({
          id: row.id,
          meta: (await instanceStatusOf(row, ctx)).meta,
          flowLastUpdatedAt: row.flows_updated_at?.toISOString() ?? null,
        })),
      );
      return { count: instances.length, instances };
    }),

  ofTeam: procedure
    .meta({
      permission: "team:projects:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/applications",
        tags: [TAG],
        summary: "The team's applications with their instances (viewers and up)",
      },
    })
    .input(TeamIdInput)
    .output(TeamApplicationList)
    .query(async ({ ctx }) => {
      const applications = await teamApplications(ctx, (project) => instanceSummary(project, ctx));
      return {
        count: applications.length,
        applications: applications.map(({ application, instances }) => ({
          ...applicationSummary(application, ctx.baseUrl),
          instances,
        })),
      };
    }),

  statusOfTeam: procedure
    .meta({
      permission: "team:projects:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/applications/status",
        tags: [TAG],
        summary: "The state of every instance of the team's applications (viewers and up)",
      },
    })
    .input(TeamIdInput)
    .output(TeamApplicationStatusList)
    .query(async ({ ctx }) => {
      const applications = await teamApplications(ctx, (project) => instanceStatusOf(project, ctx));
      return {
        count: applications.length,
        applications: applications.map(({ application, instances }) => ({
          id: application.id,
          instances,
        })),
      };
    }),
});

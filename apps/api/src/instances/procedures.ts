// Hosted instances (FlowFuse's /projects): created in an application by its team's owners, read by
// viewers and up, their environment variables changed by members, everything else by owners; and
// started, stopped, restarted and suspended through the runtime (instances/runtime.ts).
// Their state, log, editor token and actions are in running-procedures.ts.
import { actsAsAdmin } from "@flowplane/auth";
import {
  CheckInstanceNameInput,
  CreateInstanceInput,
  type EnvVar,
  Instance,
  InstanceIdInput,
  INSTANCE_NAME,
  NameAvailable,
  PLATFORM_ENV_PREFIX,
  RESERVED_INSTANCE_NAMES,
  Role,
  Status,
  UpdateInstanceInput,
} from "@flowplane/contract";
import {
  countTeamProjects,
  defaultCatalogue,
  deleteProject,
  type EnvVar as StoredEnvVar,
  findApplication,
  findProject,
  findProjectType,
  findStack,
  findTemplate,
  insertProject,
  isUniqueViolation,
  lockTeam,
  projectNameTaken,
  teamLimits,
  updateProject,
  userOwnsATeam,
} from "@flowplane/db";
import { ApiError, forbidden, notFound } from "../core/errors";
import { actorOf, type Context, procedure, router, teamOf } from "../core/trpc";
import { checkIfMatch, setETag } from "../core/writes";
import { recordInstanceEvent, recordSettingsUpdated } from "./events";
import { instanceView } from "./views";
import { projectOf, TAG } from "./instance-of";
import { runningProcedures } from "./running-procedures";

const nameRefused = (message: string) =>
  new ApiError(409, "invalid_project_name", message, [{ path: "name", message }]);

/** FlowFuse's rules for instance names: the format (400), reserved and taken names (409). */
async function checkName(ctx: Pick<Context, "db">, name: string, except?: string) {
  if (RESERVED_INSTANCE_NAMES.includes(name.toLowerCase())) throw nameRefused("Name not allowed");
  if (await projectNameTaken(ctx.db, name, except)) throw nameRefused("Name in use");
}

/**
 * The variables to store: the platform's `FF_*` dropped (they are set at every start), and a
 * hidden variable sent with an empty value keeping the value it had.
 */
function envToStore(sent: EnvVar[], before: StoredEnvVar[]): StoredEnvVar[] {
  return sent
    .filter((variable) => !variable.name.startsWith(PLATFORM_ENV_PREFIX))
    .map((variable) => {
      const hidden = variable.hidden ?? false;
      const old = before.find((other) => other.name === variable.name);
      const value = hidden && variable.value === "" && old ? old.value : variable.value;
      return { name: variable.name, value, hidden };
    });
}

export const instancesRouter = router({
  create: procedure
    .meta({
      create: "replay",
      permission: "project:create",
      errors: [409],
      openapi: {
        method: "POST",
        path: "/api/v1/projects",
        tags: [TAG],
        summary: "Create an instance in an application (owners of its team)",
        description:
          "`projectType`, `stack` and `template` default to the platform's defaults. The instance starts in the background: `meta.state` is `starting` until its Node-RED answers. Names are unique on the platform without regard to case: a reserved or taken one is 409 `invalid_project_name`. Past the team type's `instances` limit, 400 `instance_limit_reached`.",
      },
    })
    .input(CreateInstanceInput)
    .output(Instance)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      await checkName(ctx, input.name);
      const defaults = await defaultCatalogue(ctx.db);
      const projectType = await findProjectType(
        ctx.db,
        input.projectType ?? defaults.projectType?.id ?? "",
      );
      if (!projectType?.active) {
        throw new ApiError(400, "invalid_project_type", "No such active instance type");
      }
      const stackId = input.stack ?? projectType.default_stack_id ?? defaults.stack?.id ?? "";
      const stack = await findStack(ctx.db, stackId);
      if (
        !stack?.active ||
        (stack.project_type_id !== null && stack.project_type_id !== projectType.id)
      ) {
        throw new ApiError(400, "invalid_stack", "No such active stack for the instance type");
      }
      const template = await findTemplate(ctx.db, input.template ?? defaults.template?.id ?? "");
      if (!template?.active) {
        throw new ApiError(400, "invalid_template", "No such active template");
      }
      const templateEnv = Array.isArray(template.settings.env)
        ? (template.settings.env as StoredEnvVar[])
        : [];

      const id = await ctx.db.transaction().execute(async (trx) => {
        // The team row is the lock: two creations cannot both take the last place.
        if (!(await lockTeam(trx, teamId))) throw notFound();
        const application = await findApplication(trx, input.applicationId);
        if (!application || application.team_id !== teamId) throw notFound();
        const limit = (await teamLimits(trx, teamId))?.instances?.limit ?? null;
        if (limit !== null && (await countTeamProjects(trx, teamId)) >= limit) {
          throw new ApiError(
            400,
            "instance_limit_reached",
            `The team's type allows ${limit} instance${limit === 1 ? "" : "s"}`,
          );
        }
        let row;
        try {
          row = await insertProject(trx, {
            name: input.name,
            applicationId: application.id,
            teamId,
            projectTypeId: projectType.id,
            stackId: stack.id,
            templateId: template.id,
            env: envToStore(templateEnv, []),
            starting: ctx.instances !== undefined,
          });
        } catch (error) {
          if (isUniqueViolation(error)) throw nameRefused("Name in use");
          throw error;
        }
        await recordInstanceEvent(trx, "project.created", actorOf(ctx), row, {
          application: { id: application.id, name: application.name },
        });
        return row.id;
      });
      await ctx.instances?.created(id);
      return instanceView(await projectOf(ctx, id), ctx);
    }),

  checkName: procedure
    .meta({
      permission: "project:check-name",
      // FlowFuse limits POST /projects/check-name (a way to probe names) to 6 per 30 s.
      rateLimit: { limit: "routes", always: false },
      errors: [409],
      openapi: {
        method: "POST",
        path: "/api/v1/projects/check-name",
        tags: [TAG],
        summary: "Whether a name is free for a new instance (owners of a team)",
        description:
          "`{ available: true }`; 400 `invalid_name` for a name instances cannot have, 409 `invalid_project_name` for a reserved or taken one. Callers who own no team get 403.",
      },
    })
    .input(CheckInstanceNameInput)
    .output(NameAvailable)
    .mutation(async ({ ctx, input }) => {
      if (!(await userOwnsATeam(ctx.db, ctx.auth.userId))) {
        throw forbidden("Only owners of a team may create instances");
      }
      if (!INSTANCE_NAME.test(input.name) || input.name.length > 63) {
        throw new ApiError(400, "invalid_name", "Letters, digits and '-', starting with a letter", [
          { path: "name", message: "Letters, digits and '-', starting with a letter" },
        ]);
      }
      await checkName(ctx, input.name);
      return { available: true as const };
    }),

  get: procedure
    .meta({
      permission: "project:read",
      etag: true,
      openapi: {
        method: "GET",
        path: "/api/v1/projects/{instanceId}",
        tags: [TAG],
        summary: "An instance, with its state (viewers and up)",
        description:
          "Hidden variables' values are blank; the platform's `FF_*` variables are included.",
      },
    })
    .input(InstanceIdInput)
    .output(Instance)
    .query(async ({ ctx, input }) => {
      const project = await projectOf(ctx, input.instanceId);
      setETag(ctx, project.version);
      return instanceView(project, ctx);
    }),

  update: procedure
    .meta({
      permission: "project:edit-env",
      errors: [409],
      etag: true,
      openapi: {
        method: "PUT",
        path: "/api/v1/projects/{instanceId}",
        tags: [TAG],
        summary: "Change an instance's name or variables (members: variables only)",
        description:
          "`settings.env` replaces the instance's variables: members and owners. A hidden variable sent with an empty value keeps its value; `FF_*` variables are the platform's and are dropped. A new `name`: owners. Changes reach the running Node-RED when it next starts (restart it).",
      },
    })
    .input(UpdateInstanceInput)
    .output(Instance)
    .mutation(async ({ ctx, input }) => {
      const { role } = teamOf(ctx);
      if (input.name !== undefined && (role ?? 0) < Role.owner && !actsAsAdmin(ctx.auth)) {
        throw forbidden("Only owners may rename an instance; members change its variables");
      }
      if (input.name === undefined && input.settings?.env === undefined) {
        await checkIfMatch(ctx.db, ctx, "projects", input.instanceId);
        const project = await projectOf(ctx, input.instanceId);
        setETag(ctx, project.version);
        return instanceView(project, ctx);
      }
      if (input.name !== undefined) await checkName(ctx, input.name, input.instanceId);
      await ctx.db.transaction().execute(async (trx) => {
        await checkIfMatch(trx, ctx, "projects", input.instanceId);
        const before = await findProject(trx, input.instanceId);
        if (!before) throw notFound();
        const env =
          input.settings?.env === undefined
            ? undefined
            : envToStore(input.settings.env, before.settings.env ?? []);
        try {
          await updateProject(trx, before.id, { name: input.name, env });
        } catch (error) {
          if (isUniqueViolation(error)) throw nameRefused("Name in use");
          throw error;
        }
        await recordSettingsUpdated(trx, actorOf(ctx), before, { name: input.name, env });
      });
      const project = await projectOf(ctx, input.instanceId);
      setETag(ctx, project.version);
      return instanceView(project, ctx);
    }),

  delete: procedure
    .meta({
      permission: "project:delete",
      etag: true,
      openapi: {
        method: "DELETE",
        path: "/api/v1/projects/{instanceId}",
        tags: [TAG],
        summary: "Delete an instance (owners)",
        description:
          "Its Node-RED is stopped and its files, log, flows and credentials are deleted.",
      },
    })
    .input(InstanceIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const project = await projectOf(ctx, input.instanceId);
      // Checked before its Node-RED is stopped, and again with the row locked as it is deleted.
      await checkIfMatch(ctx.db, ctx, "projects", project.id);
      const deleteRow = () =>
        ctx.db.transaction().execute(async (trx) => {
          await checkIfMatch(trx, ctx, "projects", project.id);
          if (!(await deleteProject(trx, project.id))) throw notFound();
          await recordInstanceEvent(trx, "project.deleted", actorOf(ctx), project);
        });
      await (ctx.instances ? ctx.instances.remove(project.id, deleteRow) : deleteRow());
      return { status: "okay" as const };
    }),

  ...runningProcedures,
});

// Snapshots of hosted instances (FlowFuse's /projects/{id}/snapshots) and the owner-agnostic
// /snapshots/{id} routes: members take them, viewers list and read them, owners rename and delete
// them. A snapshot's content never changes once taken; its secrets are sealed under its own key.
import {
  CreateInstanceSnapshotInput,
  ExportedSnapshot,
  ExportInstanceSnapshotInput,
  ExportSnapshotInput,
  FullSnapshot,
  ImportSnapshotInput,
  InstanceDeviceSettings,
  InstanceIdInput,
  RollbackInput,
  SetInstanceDeviceTargetInput,
  InstanceSnapshotIdInput,
  ListInstanceSnapshotsInput,
  Snapshot,
  SnapshotIdInput,
  SnapshotList,
  Status,
  UpdateSnapshotInput,
} from "@flowplane/contract";
import {
  type Db,
  deleteSnapshot,
  findProject,
  findSnapshot,
  findSnapshotSummary,
  findUser,
  insertSnapshot,
  listSnapshots,
  newId,
  type ProjectDetail,
  recordAudit,
  setProjectDeviceTarget,
  type SnapshotSummaryRow,
  updateSnapshot,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { actorOf, type Context, procedure, router } from "../core/trpc";
import {
  contentOf,
  contentOfInstance,
  deployedState,
  givenEnv,
  openCredentials,
  readInstanceState,
  sealSecrets,
  type SnapshotContent,
  writeInstanceState,
} from "./content";
import { exportSnapshot, importedContent } from "./transfer";
import { fullSnapshotView, snapshotView } from "./views";

const TAG = "Snapshots";

async function projectOf(ctx: Pick<Context, "db">, instanceId: string): Promise<ProjectDetail> {
  const project = await findProject(ctx.db, instanceId);
  if (!project) throw notFound();
  return project;
}

/** The snapshot, when it is the instance's (another's is as missing as an unknown one). */
async function instanceSnapshotOf(
  ctx: Pick<Context, "db">,
  instanceId: string,
  snapshotId: string,
): Promise<SnapshotSummaryRow> {
  const row = await findSnapshotSummary(ctx.db, snapshotId);
  if (!row || row.project_id !== instanceId) throw notFound();
  return row;
}

async function snapshotOf(ctx: Pick<Context, "db">, snapshotId: string) {
  const row = await findSnapshotSummary(ctx.db, snapshotId);
  if (!row) throw notFound();
  return row;
}

/** The audit event of a change to a snapshot, by its owner (FlowFuse's names). */
export function snapshotEvent(
  row: Pick<SnapshotSummaryRow, "owner_type">,
  action: "created" | "updated" | "deleted" | "exported" | "imported",
): string {
  return row.owner_type === "instance"
    ? `project.snapshot.${action}`
    : `application.device.snapshot.${action}`;
}

/** Where a snapshot's audit entry goes: its instance's log (devices: their own area). */
export function snapshotAuditEntity(
  row: Pick<SnapshotSummaryRow, "project_id" | "application_id">,
) {
  return row.project_id !== null
    ? { type: "project" as const, id: row.project_id }
    : { type: "application" as const, id: row.application_id };
}

/** Stores a new snapshot of an instance: its content with its secrets sealed, and the audit entry. */
export async function storeInstanceSnapshot(
  ctx: Pick<Context, "db" | "tokenSecret" | "auth">,
  db: Db,
  project: ProjectDetail,
  content: SnapshotContent,
  meta: { name: string; description?: string; event: "created" | "imported" },
) {
  const id = newId();
  const row = await insertSnapshot(db, {
    id,
    teamId: project.team_id,
    applicationId: project.application_id,
    owner: { type: "instance", projectId: project.id },
    name: meta.name,
    description: meta.description ?? "",
    userId: ctx.auth.userId,
    flows: content.flows,
    settings: content.settings,
    secrets: sealSecrets(ctx.tokenSecret, id, content.secrets),
  });
  await recordAudit(db, {
    event: `project.snapshot.${meta.event}`,
    entity: { type: "project", id: project.id },
    teamId: project.team_id,
    actor: actorOf(ctx),
    body: { project: { id: project.id, name: project.name }, snapshot: { id, name: row.name } },
  });
  return row;
}

/** A snapshot named in a body that is not the one it must be: 400 naming the field. */
const invalidSnapshot = (field: string, message: string) =>
  new ApiError(400, "invalid_snapshot", message, [{ path: field, message }]);

/** The caller as an export names them. */
async function exportedBy(ctx: Context) {
  const user = await findUser(ctx.db, ctx.auth.userId);
  if (!user) throw notFound();
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    admin: user.admin,
    suspended: user.suspended,
    createdAt: user.created_at.toISOString(),
  };
}

async function exportOf(
  ctx: Context,
  summary: SnapshotSummaryRow,
  input: {
    credentialSecret: string;
    components?: Parameters<typeof exportSnapshot>[4]["components"];
  },
) {
  const row = await findSnapshot(ctx.db, summary.id);
  if (!row) throw notFound();
  const exported = exportSnapshot(ctx.tokenSecret, summary, row, ctx.baseUrl, {
    credentialSecret: input.credentialSecret,
    components: input.components,
    exportedBy: await exportedBy(ctx),
  });
  await ctx.db.transaction().execute((trx) =>
    recordAudit(trx, {
      event: snapshotEvent(summary, "exported"),
      entity: snapshotAuditEntity(summary),
      teamId: summary.team_id,
      actor: actorOf(ctx),
      body: {
        ...(summary.project_id !== null && {
          project: { id: summary.project_id, name: summary.project_name },
        }),
        snapshot: { id: summary.id, name: summary.name },
      },
    }),
  );
  return exported;
}

export const snapshotsRouter = router({
  ofInstance: procedure
    .meta({
      permission: "project:snapshot:list",
      openapi: {
        method: "GET",
        path: "/api/v1/projects/{instanceId}/snapshots",
        tags: [TAG],
        summary: "An instance's snapshots, newest first (viewers and up)",
        description:
          "Paged with `limit` and `cursor` (`meta.next_cursor`); `count` is the number of the instance's snapshots.",
      },
    })
    .input(ListInstanceSnapshotsInput)
    .output(SnapshotList)
    .query(async ({ ctx, input }) => {
      const project = await projectOf(ctx, input.instanceId);
      const page = await listSnapshots(
        ctx.db,
        { projectId: project.id },
        { limit: input.limit, cursor: input.cursor },
      );
      return {
        meta: { ...(page.nextCursor && { next_cursor: page.nextCursor }) },
        count: page.total,
        snapshots: page.rows.map((row) => snapshotView(row, ctx.baseUrl)),
      };
    }),

  create: procedure
    .meta({
      permission: "project:snapshot:create",
      openapi: {
        method: "POST",
        path: "/api/v1/projects/{instanceId}/snapshots",
        tags: [TAG],
        summary: "Take a snapshot of an instance (members and owners)",
        description:
          "Keeps the instance's flows and credentials as deployed, its variables and the modules its flows use (its Node-RED version and what its palette installed) — or the content given (`flows`, `credentials` with the `credentialSecret` they are encrypted with, `settings.modules`). Credentials are encrypted at rest and never answered in the clear. `setAsTarget` also makes it the snapshot the instance's devices run.",
      },
    })
    .input(CreateInstanceSnapshotInput)
    .output(Snapshot)
    .mutation(async ({ ctx, input }) => {
      const project = await projectOf(ctx, input.instanceId);
      const content = await contentOfInstance(ctx.db, project);
      if (input.flows !== undefined) {
        const given = Array.isArray(input.flows) ? { flows: input.flows } : input.flows;
        content.flows = given.flows;
        const credentials =
          input.credentials ?? ("credentials" in given ? given.credentials : undefined);
        content.secrets.credentials = openCredentials(credentials, input.credentialSecret);
      } else if (input.credentials !== undefined) {
        content.secrets.credentials = openCredentials(input.credentials, input.credentialSecret);
      }
      if (input.settings?.modules !== undefined) content.settings.modules = input.settings.modules;
      if (input.settings?.env !== undefined) {
        const env = givenEnv(input.settings.env);
        content.settings.env = env.map((v) => ({ ...v, value: v.hidden ? "" : v.value }));
        content.secrets.env = Object.fromEntries(
          env.filter((v) => v.hidden).map((v) => [v.name, v.value]),
        );
      }
      const row = await ctx.db.transaction().execute(async (trx) => {
        const stored = await storeInstanceSnapshot(ctx, trx, project, content, {
          name: input.name,
          description: input.description,
          event: "created",
        });
        if (input.setAsTarget) {
          await setProjectDeviceTarget(trx, project.id, stored.id);
          await recordAudit(trx, {
            event: "project.snapshot.device-target-set",
            entity: { type: "project", id: project.id },
            teamId: project.team_id,
            actor: actorOf(ctx),
            body: {
              project: { id: project.id, name: project.name },
              snapshot: { id: stored.id, name: stored.name },
            },
          });
        }
        return stored;
      });
      return snapshotView((await findSnapshotSummary(ctx.db, row.id))!, ctx.baseUrl);
    }),

  ofInstanceById: procedure
    .meta({
      permission: "project:snapshot:read",
      openapi: {
        method: "GET",
        path: "/api/v1/projects/{instanceId}/snapshots/{snapshotId}",
        tags: [TAG],
        summary: "One of an instance's snapshots (viewers and up)",
      },
    })
    .input(InstanceSnapshotIdInput)
    .output(Snapshot)
    .query(async ({ ctx, input }) =>
      snapshotView(await instanceSnapshotOf(ctx, input.instanceId, input.snapshotId), ctx.baseUrl),
    ),

  deleteOfInstance: procedure
    .meta({
      permission: "project:snapshot:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/projects/{instanceId}/snapshots/{snapshotId}",
        tags: [TAG],
        summary: "Delete one of an instance's snapshots (owners)",
        description: "Devices that have it as their target keep running it, and get no new target.",
      },
    })
    .input(InstanceSnapshotIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const row = await instanceSnapshotOf(ctx, input.instanceId, input.snapshotId);
      await remove(ctx, row);
      return { status: "okay" as const };
    }),

  byId: procedure
    .meta({
      permission: "snapshot:meta",
      openapi: {
        method: "GET",
        path: "/api/v1/snapshots/{snapshotId}",
        tags: [TAG],
        summary: "A snapshot, whatever owns it (viewers and up)",
      },
    })
    .input(SnapshotIdInput)
    .output(Snapshot)
    .query(async ({ ctx, input }) =>
      snapshotView(await snapshotOf(ctx, input.snapshotId), ctx.baseUrl),
    ),

  full: procedure
    .meta({
      permission: "snapshot:full",
      openapi: {
        method: "GET",
        path: "/api/v1/snapshots/{snapshotId}/full",
        tags: [TAG],
        summary: "A snapshot's content, without credentials (members and owners)",
        description:
          "Its flows, settings, variables (hidden ones blank, named in `hiddenEnv`) and modules. Credentials are never answered: export the snapshot with a secret of yours to take them along.",
      },
    })
    .input(SnapshotIdInput)
    .output(FullSnapshot)
    .query(async ({ ctx, input }) => {
      const summary = await snapshotOf(ctx, input.snapshotId);
      const row = await findSnapshot(ctx.db, input.snapshotId);
      if (!row) throw notFound();
      return fullSnapshotView(summary, row, ctx.baseUrl);
    }),

  update: procedure
    .meta({
      permission: "snapshot:edit",
      openapi: {
        method: "PUT",
        path: "/api/v1/snapshots/{snapshotId}",
        tags: [TAG],
        summary: "Rename a snapshot or change its description (owners)",
        description: "Only `name` and `description` change: a snapshot's content never does.",
      },
    })
    .input(UpdateSnapshotInput)
    .output(Snapshot)
    .mutation(async ({ ctx, input }) => {
      const before = await snapshotOf(ctx, input.snapshotId);
      const change = {
        ...(input.name !== undefined && { name: input.name }),
        ...(input.description !== undefined && { description: input.description }),
      };
      if (Object.keys(change).length > 0) {
        await ctx.db.transaction().execute(async (trx) => {
          if (!(await updateSnapshot(trx, before.id, change))) throw notFound();
          await recordAudit(trx, {
            event: snapshotEvent(before, "updated"),
            entity: snapshotAuditEntity(before),
            teamId: before.team_id,
            actor: actorOf(ctx),
            body: {
              snapshot: { id: before.id, name: input.name ?? before.name },
              ...(input.name !== undefined &&
                input.name !== before.name && { name: { old: before.name, new: input.name } }),
              ...(input.description !== undefined &&
                input.description !== before.description && { description: true }),
            },
          });
        });
      }
      return snapshotView(await snapshotOf(ctx, input.snapshotId), ctx.baseUrl);
    }),

  exportOfInstance: procedure
    .meta({
      permission: "project:snapshot:export",
      openapi: {
        method: "POST",
        path: "/api/v1/projects/{instanceId}/snapshots/{snapshotId}/export",
        tags: [TAG],
        summary: "Export one of an instance's snapshots (members and owners)",
        description:
          "As `POST /snapshots/{snapshotId}/export`: the credentials (and hidden variables' values) encrypted with the `credentialSecret` given.",
      },
    })
    .input(ExportInstanceSnapshotInput)
    .output(ExportedSnapshot)
    .mutation(async ({ ctx, input }) =>
      exportOf(ctx, await instanceSnapshotOf(ctx, input.instanceId, input.snapshotId), input),
    ),

  export: procedure
    .meta({
      permission: "snapshot:export",
      openapi: {
        method: "POST",
        path: "/api/v1/snapshots/{snapshotId}/export",
        tags: [TAG],
        summary:
          "Export a snapshot, its credentials encrypted with your secret (members and owners)",
        description:
          "The whole snapshot: flows, settings, variables, modules, and `flows.credentials` encrypted with the `credentialSecret` given, in Node-RED's format. Hidden variables' values travel in `settings.secretEnv`, encrypted the same way (Flowplane's; FlowFuse exports them in the clear). `components` leaves out the flows, the credentials, or the variables' values (`envVars: \"keys\"`) or the variables (`false`). Import it with the same secret (`POST /snapshots/import`).",
      },
    })
    .input(ExportSnapshotInput)
    .output(ExportedSnapshot)
    .mutation(async ({ ctx, input }) =>
      exportOf(ctx, await snapshotOf(ctx, input.snapshotId), input),
    ),

  import: procedure
    .meta({
      permission: "snapshot:import",
      openapi: {
        method: "POST",
        path: "/api/v1/snapshots/import",
        tags: [TAG],
        summary: "Import an exported snapshot into an instance of your team (owners)",
        description:
          "Makes a new snapshot of the instance named by `ownerId` (`ownerType` `instance`) from an export: its credentials (and hidden variables) opened with the `credentialSecret` it was exported with (a wrong one is 400 `bad_request`), and sealed anew. Roll the instance back to it to run it. An instance the caller cannot see is 400 naming `ownerId`.",
      },
    })
    .input(ImportSnapshotInput)
    .output(Snapshot)
    .mutation(async ({ ctx, input }) => {
      const project = await findProject(ctx.db, input.ownerId);
      if (!project) throw invalidSnapshot("ownerId", "No such instance");
      const content = importedContent(input.snapshot, input.credentialSecret, input.components);
      const row = await ctx.db.transaction().execute((trx) =>
        storeInstanceSnapshot(ctx, trx, project, content, {
          name: input.snapshot.name,
          description: input.snapshot.description,
          event: "imported",
        }),
      );
      return snapshotView((await findSnapshotSummary(ctx.db, row.id))!, ctx.baseUrl);
    }),

  rollback: procedure
    .meta({
      permission: "project:snapshot:rollback",
      errors: [409, 503],
      openapi: {
        method: "POST",
        path: "/api/v1/projects/{instanceId}/actions/rollback",
        tags: [TAG],
        summary: "Roll an instance back to one of its snapshots (members and owners)",
        description:
          "The instance gets the snapshot's flows, credentials, variables and modules; a running instance restarts on them (its modules installed first). If it does not start on them, it gets back what it had and starts on that, and the failure is answered: nothing is lost. Answers once done. A snapshot that is not the instance's is 400 `invalid_snapshot`.",
      },
    })
    .input(RollbackInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const project = await projectOf(ctx, input.instanceId);
      const summary = await findSnapshotSummary(ctx.db, input.snapshot);
      if (!summary || summary.project_id !== project.id) {
        throw invalidSnapshot("snapshot", "Not one of the instance's snapshots");
      }
      const row = await findSnapshot(ctx.db, summary.id);
      if (!row) throw invalidSnapshot("snapshot", "Not one of the instance's snapshots");
      const content = contentOf(ctx.tokenSecret, row);
      const write = async () =>
        ctx.db.transaction().execute(async (trx) => {
          const before = await readInstanceState(trx, project.id);
          await writeInstanceState(trx, project.id, deployedState(before, content));
          return () =>
            ctx.db.transaction().execute((undo) => writeInstanceState(undo, project.id, before));
        });
      const record = (trx: Db) =>
        recordAudit(trx, {
          event: "project.snapshot.rolled-back",
          entity: { type: "project", id: project.id },
          teamId: project.team_id,
          actor: actorOf(ctx),
          body: {
            project: { id: project.id, name: project.name },
            snapshot: { id: summary.id, name: summary.name },
          },
        });
      if (ctx.instances) {
        await ctx.instances.replace(project.id, write, record);
      } else {
        // No runtime here: the content changes, and Node-RED runs it when it next starts.
        await write();
        await ctx.db.transaction().execute(record);
      }
      return { status: "okay" as const };
    }),

  deviceSettings: procedure
    .meta({
      permission: "project:read",
      openapi: {
        method: "GET",
        path: "/api/v1/projects/{instanceId}/devices/settings",
        tags: [TAG],
        summary: "The snapshot an instance's devices run (viewers and up)",
      },
    })
    .input(InstanceIdInput)
    .output(InstanceDeviceSettings)
    .query(async ({ ctx, input }) => {
      const project = await projectOf(ctx, input.instanceId);
      return { targetSnapshot: project.device_target_snapshot_id };
    }),

  setDeviceTarget: procedure
    .meta({
      permission: "project:snapshot:set-target",
      openapi: {
        method: "POST",
        path: "/api/v1/projects/{instanceId}/devices/settings",
        tags: [TAG],
        summary: "Set the snapshot an instance's devices run (members and owners)",
        description:
          "`targetSnapshot`: a snapshot of the instance's application, or null to clear. A snapshot of another application, or of another team (FlowFuse accepts those), is 400 `invalid_snapshot` naming the field.",
      },
    })
    .input(SetInstanceDeviceTargetInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const project = await projectOf(ctx, input.instanceId);
      let target: SnapshotSummaryRow | undefined;
      if (input.targetSnapshot !== null) {
        target = await findSnapshotSummary(ctx.db, input.targetSnapshot);
        if (
          !target ||
          target.team_id !== project.team_id ||
          target.application_id !== project.application_id
        ) {
          throw invalidSnapshot("targetSnapshot", "Not a snapshot of the instance's application");
        }
      }
      await ctx.db.transaction().execute(async (trx) => {
        await setProjectDeviceTarget(trx, project.id, target?.id ?? null);
        await recordAudit(trx, {
          event: "project.snapshot.device-target-set",
          entity: { type: "project", id: project.id },
          teamId: project.team_id,
          actor: actorOf(ctx),
          body: {
            project: { id: project.id, name: project.name },
            snapshot: target ? { id: target.id, name: target.name } : null,
          },
        });
      });
      return { status: "okay" as const };
    }),

  delete: procedure
    .meta({
      permission: "snapshot:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/snapshots/{snapshotId}",
        tags: [TAG],
        summary: "Delete a snapshot (owners)",
      },
    })
    .input(SnapshotIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      await remove(ctx, await snapshotOf(ctx, input.snapshotId));
      return { status: "okay" as const };
    }),
});

async function remove(ctx: Context, row: SnapshotSummaryRow) {
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await deleteSnapshot(trx, row.id))) throw notFound();
    await recordAudit(trx, {
      event: snapshotEvent(row, "deleted"),
      entity: snapshotAuditEntity(row),
      teamId: row.team_id,
      actor: actorOf(ctx),
      body: {
        ...(row.project_id !== null && { project: { id: row.project_id, name: row.project_name } }),
        snapshot: { id: row.id, name: row.name },
      },
    });
  });
}

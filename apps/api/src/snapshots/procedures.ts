// Snapshots of hosted instances (FlowFuse's /projects/{id}/snapshots) and the owner-agnostic
// /snapshots/{id} routes: members take them, viewers list and read them, owners rename and delete
// them. A snapshot's content never changes once taken; its secrets are sealed under its own key.
import {
  CreateInstanceSnapshotInput,
  FullSnapshot,
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
  type EnvVar,
  findProject,
  findSnapshot,
  findSnapshotSummary,
  insertSnapshot,
  listSnapshots,
  newId,
  type ProjectDetail,
  recordAudit,
  setProjectDeviceTarget,
  type SnapshotSummaryRow,
  updateSnapshot,
} from "@flowplane/db";
import { notFound } from "../core/errors";
import { actorOf, type Context, procedure, router } from "../core/trpc";
import { contentOfInstance, openCredentials, sealSecrets, type SnapshotContent } from "./content";
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
export function snapshotAuditEntity(row: Pick<SnapshotSummaryRow, "project_id" | "application_id">) {
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

/** Variables given with content: FlowFuse's `{ NAME: value }`, or Flowplane's array. */
export function givenEnv(
  env: Record<string, string> | { name: string; value: string; hidden?: boolean }[],
  hiddenNames: readonly string[] = [],
): EnvVar[] {
  const list = Array.isArray(env)
    ? env
    : Object.entries(env).map(([name, value]) => ({ name, value, hidden: undefined }));
  return list
    .filter((v) => !v.name.startsWith("FF_"))
    .map((v) => ({
      name: v.name,
      value: v.value,
      hidden: v.hidden ?? hiddenNames.includes(v.name),
    }));
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
        description:
          "Devices that have it as their target keep running it, and get no new target.",
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
    .query(async ({ ctx, input }) => snapshotView(await snapshotOf(ctx, input.snapshotId), ctx.baseUrl)),

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

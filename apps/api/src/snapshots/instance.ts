// Snapshots of hosted instances (FlowFuse's /projects/{id}/snapshots): members take them, viewers
// list and read them, owners delete them; rolling an instance back to one, and the snapshot its
// devices run (/projects/{id}/devices/settings).
import {
  CreateInstanceSnapshotInput,
  InstanceDeviceSettings,
  InstanceIdInput,
  RollbackInput,
  SetInstanceDeviceTargetInput,
  InstanceSnapshotIdInput,
  ListInstanceSnapshotsInput,
  Snapshot,
  SnapshotList,
  Status,
} from "@flowplane/contract";
import { findSnapshot, findSnapshotSummary, type SnapshotSummaryRow } from "@flowplane/db";
import { actorOf, procedure } from "../core/trpc";
import {
  contentOf,
  contentOfInstance,
  deployedState,
  givenEnv,
  openCredentials,
  writeOntoInstance,
} from "./content";
import { recordInstanceSnapshotEvent } from "./events";
import { snapshotView } from "./views";
import {
  TAG,
  projectOf,
  instanceSnapshotOf,
  setInstanceDeviceTarget,
  snapshotPage,
  storeInstanceSnapshot,
  takeSnapshot,
  invalidSnapshot,
  remove,
} from "./records";

/** The procedures under /projects/{instanceId}. */
export const instanceSnapshotProcedures = {
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
      return snapshotPage(ctx, { projectId: project.id }, input);
    }),

  create: procedure
    .meta({
      create: "replay",
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
      return takeSnapshot(
        ctx,
        input.setAsTarget,
        (trx) =>
          storeInstanceSnapshot(ctx, trx, project, content, {
            name: input.name,
            description: input.description,
            event: "created",
          }),
        (trx, stored) => setInstanceDeviceTarget(ctx, trx, project, stored),
      );
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
      await writeOntoInstance(
        ctx,
        project.id,
        (before) => deployedState(before, content),
        (trx) =>
          recordInstanceSnapshotEvent(
            trx,
            "project.snapshot.rolled-back",
            actorOf(ctx),
            project,
            summary,
          ),
      );
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
      await ctx.db
        .transaction()
        .execute((trx) => setInstanceDeviceTarget(ctx, trx, project, target ?? null));
      return { status: "okay" as const };
    }),
};

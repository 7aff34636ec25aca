// Exporting a snapshot (its credentials encrypted with the caller's secret, transfer.ts) and
// importing an export into an instance, where its secrets are sealed anew.
import {
  ExportedSnapshot,
  ExportInstanceSnapshotInput,
  ExportSnapshotInput,
  ImportSnapshotInput,
  Snapshot,
} from "@flowplane/contract";
import {
  findDevice,
  findProject,
  findSnapshot,
  findSnapshotSummary,
  findUser,
  type SnapshotSummaryRow,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { actorOf, type Context, procedure } from "../core/trpc";
import { storeDeviceSnapshot } from "./device";
import { recordSnapshotEvent } from "./events";
import { exportSnapshot, importedContent } from "./transfer";
import { snapshotView } from "./views";
import {
  TAG,
  instanceSnapshotOf,
  snapshotOf,
  storeInstanceSnapshot,
  invalidSnapshot,
} from "./records";

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
  await ctx.db
    .transaction()
    .execute((trx) => recordSnapshotEvent(trx, "exported", actorOf(ctx), summary));
  return exported;
}

/** Export (of an instance's snapshot, or any) and import. */
export const snapshotTransferProcedures = {
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
      create: "replay",
      permission: "snapshot:import",
      openapi: {
        method: "POST",
        path: "/api/v1/snapshots/import",
        tags: [TAG],
        summary: "Import an exported snapshot into an instance or a device of your team (owners)",
        description:
          "Makes a new snapshot of the instance (`ownerType` `instance`) or the application's device (`ownerType` `device`) named by `ownerId` from an export: its credentials (and hidden variables) opened with the `credentialSecret` it was exported with (a wrong one is 400 `bad_request`), and sealed anew. Roll the instance back to it, or make it the device's target, to run it. An instance or device the caller cannot see is 400 naming `ownerId`; a device that is not an application's, 400 `invalid_device`.",
      },
    })
    .input(ImportSnapshotInput)
    .output(Snapshot)
    .mutation(async ({ ctx, input }) => {
      const content = importedContent(input.snapshot, input.credentialSecret, input.components);
      const meta = {
        name: input.snapshot.name,
        description: input.snapshot.description,
        event: "imported" as const,
      };
      let id: string;
      if (input.ownerType === "device") {
        const device = await findDevice(ctx.db, input.ownerId);
        if (!device) throw invalidSnapshot("ownerId", "No such device");
        if (device.application_id === null) {
          throw new ApiError(400, "invalid_device", "Not a device of an application", [
            { path: "ownerId", message: "Not a device of an application" },
          ]);
        }
        const row = await ctx.db
          .transaction()
          .execute((trx) => storeDeviceSnapshot(ctx, trx, device, content, meta));
        id = row.id;
      } else {
        const project = await findProject(ctx.db, input.ownerId);
        if (!project) throw invalidSnapshot("ownerId", "No such instance");
        const row = await ctx.db
          .transaction()
          .execute((trx) => storeInstanceSnapshot(ctx, trx, project, content, meta));
        id = row.id;
      }
      return snapshotView((await findSnapshotSummary(ctx.db, id))!, ctx.baseUrl);
    }),
};

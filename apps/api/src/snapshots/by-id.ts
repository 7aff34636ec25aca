// The owner-agnostic /snapshots/{id} routes: a snapshot of an instance or a device, read by
// viewers, its content by members, renamed and deleted by owners. Its content never changes.
import {
  FullSnapshot,
  Snapshot,
  SnapshotIdInput,
  Status,
  UpdateSnapshotInput,
} from "@flowplane/contract";
import { findSnapshot, updateSnapshot } from "@flowplane/db";
import { notFound } from "../core/errors";
import { actorOf, procedure } from "../core/trpc";
import { fullSnapshotView, snapshotView } from "./views";
import { recordSnapshotUpdated } from "./events";
import { TAG, snapshotOf, remove } from "./records";

/** The procedures under /snapshots/{snapshotId}. */
export const snapshotByIdProcedures = {
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
          await recordSnapshotUpdated(trx, actorOf(ctx), before, input);
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
};

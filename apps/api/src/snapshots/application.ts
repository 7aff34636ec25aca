// An application's snapshots (FlowFuse's GET /applications/{id}/snapshots): those of its
// instances and of its devices, newest first, optionally only one instance's or one device's.
import { ListApplicationSnapshotsInput, SnapshotList } from "@flowplane/contract";
import { findApplication } from "@flowplane/db";
import { notFound } from "../core/errors";
import { procedure, teamOf } from "../core/trpc";
import { snapshotPage, TAG } from "./records";

export const applicationSnapshotProcedures = {
  ofApplication: procedure
    .meta({
      permission: "project:snapshot:list",
      openapi: {
        method: "GET",
        path: "/api/v1/applications/{applicationId}/snapshots",
        tags: [TAG],
        summary: "An application's snapshots, of its instances and devices (viewers and up)",
        description:
          "Newest first, paged with `limit` and `cursor` (`meta.next_cursor`); `instanceId` or `deviceId` keeps only that instance's or device's (one that is not the application's has none).",
      },
    })
    .input(ListApplicationSnapshotsInput)
    .output(SnapshotList)
    .query(async ({ ctx, input }) => {
      // The team may have been found by the instance or device filter: the application must be
      // of the same team.
      const application = await findApplication(ctx.db, input.applicationId);
      if (!application || application.team_id !== teamOf(ctx).team.id) throw notFound();
      return snapshotPage(
        ctx,
        {
          applicationId: application.id,
          ...(input.instanceId !== undefined && { projectId: input.instanceId }),
          ...(input.deviceId !== undefined && { deviceId: input.deviceId }),
        },
        input,
      );
    }),
};

// Administrators' view of the whole platform (FlowFuse's /admin): its statistics and every pending
// invitation.
import { InvitationList, PlatformStats } from "@flowplane/contract";
import { listAllInvitations, platformCounts } from "@flowplane/db";
import { z } from "zod";
import { procedure, router } from "../core/trpc";
import { invitationView } from "../teams/index";

export const adminRouter = router({
  stats: procedure
    .meta({
      permission: "platform:stats",
      openapi: {
        method: "GET",
        path: "/api/v1/admin/stats",
        tags: ["Admin"],
        summary: "The platform's statistics (administrators)",
        description:
          "Users, administrators, pending invitations, teams (by type), hosted instances (by state), devices (by mode and by when they were last seen: `week` counts those seen 1–7 days ago, `month` 7–28, as FlowFuse's bands) and team broker clients. FlowFuse's licence limits (`maxUsers` …), billing counts and its OpenMetrics form are not given: Flowplane has no licence or billing.",
      },
    })
    .input(z.void())
    .output(PlatformStats)
    .query(({ ctx }) => platformCounts(ctx.db)),

  invitations: procedure
    .meta({
      permission: "invitation:list",
      openapi: {
        method: "GET",
        path: "/api/v1/admin/invitations",
        tags: ["Admin"],
        summary: "Every pending invitation (administrators)",
        description:
          "Every team's unexpired invitations, oldest first, with their invitees in full (administrators see every user's email).",
      },
    })
    .input(z.void())
    .output(InvitationList)
    .query(async ({ ctx }) => {
      const rows = await listAllInvitations(ctx.db);
      return {
        meta: {},
        count: rows.length,
        invitations: rows.map((row) => invitationView(row, ctx.baseUrl, "invitee")),
      };
    }),
});

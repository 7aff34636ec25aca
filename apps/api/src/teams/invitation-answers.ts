// An invitee's side of invitations: listing their own, accepting (they join the team with the
// invited role) and rejecting; and what the team's side shares with it (the invitation's view,
// the member limit).
import { type Invitation, InvitationIdInput, InvitationList, Status } from "@flowplane/contract";
import {
  addMember,
  countMembers,
  type Db,
  deleteInvitation,
  findMember,
  findUser,
  findUserInvitation,
  type InvitationDetail,
  listUserInvitations,
  lockTeam,
  teamLimits,
  type UserRow,
} from "@flowplane/db";
import { z } from "zod";
import { ApiError, notFound } from "../core/errors";
import { actorOf, type Context, procedure } from "../core/trpc";
import { recordInvitationAnswer } from "./events";
import { userSummaryView } from "./members";
import { teamSummary } from "./views";

/**
 * An invitation as the API shows it: to the invitee (`"invitee"`) with themselves as invitee; to
 * the team (`"team"`) with only what it was sent to, so that an answer never tells whether an
 * email has an account, nor shows an invitee's name or flags before they accept.
 */
export function invitationView(
  row: InvitationDetail,
  baseUrl: string,
  to: "team" | "invitee",
): Invitation {
  return {
    id: row.id,
    role: row.role as Invitation["role"],
    createdAt: row.created_at.toISOString(),
    sentAt: row.sent_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    team: teamSummary(row.team, baseUrl),
    invitor: row.invitor && userSummaryView(row.invitor),
    invitee:
      to === "invitee" && row.invitee
        ? userSummaryView(row.invitee)
        : row.email !== null
          ? { external: true, email: row.email }
          : { username: row.invitee!.username },
  };
}

/** The most members the team's type allows; null: no limit. */
export async function memberLimit(db: Db, teamId: string): Promise<number | null> {
  return (await teamLimits(db, teamId))?.users?.limit ?? null;
}

export const memberLimitReached = (limit: number, detail: string) =>
  new ApiError(
    400,
    "member_limit_reached",
    `The team's type allows ${limit} member${limit === 1 ? "" : "s"}${detail}`,
  );

/** The caller, as a user row. */
async function invitingUser(ctx: Context): Promise<UserRow> {
  const user = await findUser(ctx.db, ctx.auth.userId);
  // Authentication joined the user a moment ago; only a concurrent delete gets here.
  if (!user) throw new Error("caller vanished");
  return user;
}

export const invitationAnswerProcedures = {
  mine: procedure
    .meta({
      permission: "user:invitation:list",
      openapi: {
        method: "GET",
        path: "/api/v1/user/invitations",
        tags: ["User"],
        summary: "Your pending invitations",
        description:
          "Those addressed to you, and those sent to your email (any case) before you had it. Oldest first; expired ones are not listed. Unlike FlowFuse, a read-only token may list them.",
      },
    })
    .input(z.void())
    .output(InvitationList)
    .query(async ({ ctx }) => {
      const rows = await listUserInvitations(ctx.db, await invitingUser(ctx));
      return {
        meta: {},
        count: rows.length,
        invitations: rows.map((row) => invitationView(row, ctx.baseUrl, "invitee")),
      };
    }),

  accept: procedure
    .meta({
      permission: "user:edit",
      openapi: {
        method: "PATCH",
        path: "/api/v1/user/invitations/{invitationId}",
        tags: ["User"],
        summary: "Accept an invitation: you join the team with its role",
        description:
          "An invitation that is not yours, or has expired, is 404. When the team's type limits its members and the team is full, 400 `member_limit_reached` (the invitation stays). If you are already a member, your role is unchanged and the invitation is used up.",
      },
    })
    .input(InvitationIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const user = await invitingUser(ctx);
      await ctx.db.transaction().execute(async (trx) => {
        const found = await findUserInvitation(trx, user, input.invitationId);
        if (!found) throw notFound();
        const teamId = found.team_id;
        if (!(await lockTeam(trx, teamId))) throw notFound();
        if (!(await deleteInvitation(trx, found.id))) throw notFound();
        const already = await findMember(trx, teamId, user.id);
        if (!already) {
          const limit = await memberLimit(trx, teamId);
          if (limit !== null && (await countMembers(trx, teamId)) >= limit) {
            throw memberLimitReached(limit, ", and the team is full");
          }
          await addMember(trx, { teamId, userId: user.id, role: found.role });
        }
        await recordInvitationAnswer(trx, actorOf(ctx), user, found, "accepted");
      });
      return { status: "okay" as const };
    }),

  reject: procedure
    .meta({
      permission: "user:edit",
      openapi: {
        method: "DELETE",
        path: "/api/v1/user/invitations/{invitationId}",
        tags: ["User"],
        summary: "Reject an invitation",
        description: "An invitation that is not yours, or has expired, is 404.",
      },
    })
    .input(InvitationIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const user = await invitingUser(ctx);
      await ctx.db.transaction().execute(async (trx) => {
        const found = await findUserInvitation(trx, user, input.invitationId);
        if (!found) throw notFound();
        if (!(await deleteInvitation(trx, found.id))) throw notFound();
        await recordInvitationAnswer(trx, actorOf(ctx), user, found, "rejected");
      });
      return { status: "okay" as const };
    }),
};

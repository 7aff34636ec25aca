// Invitations to join a team, the team's side: owners invite existing users by username or email,
// list, resend and revoke them (the invitee's side: invitation-answers.ts). An expired invitation
// is as if it did not exist: not listed, 404 for every operation. The team type's member limit
// counts members and pending invitations when inviting, and members when accepting; both lock the
// team's row, so concurrent requests cannot together go past it.
import { actsAsAdmin } from "@flowplane/auth";
import {
  CreateInvitationInput,
  Email,
  INVITATION_DAYS,
  Invitation,
  InvitationList,
  InvitationResult,
  isTeamRole,
  MAX_INVITEES,
  Role,
  Status,
  TeamIdInput,
  TeamInvitationInput,
  Username,
} from "@flowplane/contract";
import {
  countMembers,
  countPendingInvitations,
  type Db,
  deleteExpiredInvitations,
  deleteInvitation,
  findMember,
  findTeamInvitation,
  findUserByLogin,
  insertInvitation,
  type InvitationDetail,
  listTeamInvitations,
  lockTeam,
  pendingInvitees,
  renewInvitation,
  type UserRow,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { actorOf, procedure, router, teamOf } from "../core/trpc";
import { recordInvitationEvent } from "./events";
import { invalidTeamRole } from "./members";

import {
  invitationAnswerProcedures,
  invitationView,
  memberLimit,
  memberLimitReached,
} from "./invitation-answers";

const DAY_MS = 24 * 60 * 60 * 1000;
const expiryFromNow = () => new Date(Date.now() + INVITATION_DAYS * DAY_MS);

/**
 * Whom an invitation is for, as the team's audit log records it: what it was sent to (a username,
 * or the email as typed), never whether an email has an account.
 */
const auditInvitee = (row: InvitationDetail) =>
  row.email !== null
    ? { email: row.email }
    : { id: row.invitee!.id, username: row.invitee!.username };

/** The invitees as given: comma-separated, trimmed, repeats (in any case) removed. */
function inviteesOf(list: string): string[] {
  const seen = new Map<string, string>();
  for (const entry of list.split(",")) {
    const invitee = entry.trim();
    if (invitee && !seen.has(invitee.toLowerCase())) seen.set(invitee.toLowerCase(), invitee);
  }
  return [...seen.values()];
}

/** A user (by username; or by email, kept as typed), or an email nobody has. */
type Invitee = { given: string; user: UserRow; email?: string } | { given: string; email: string };

/**
 * Decides, for each invitee, whom to invite or why not. Runs in the transaction that holds the
 * team's lock, so what it reads (members, pending invitations) cannot change before the inserts.
 */
async function sortInvitees(
  trx: Db,
  teamId: string,
  given: string[],
  /**
   * Whether the caller may see whose an email is (administrators, who see every user's): an
   * owner sees the members' and invitees' usernames but not their emails, so for them an email is
   * answered from the address alone, as for one nobody has.
   */
  seesEmails: boolean,
): Promise<{ invite: Invitee[]; errors: Record<string, string>; covered: number }> {
  const pending = await pendingInvitees(trx, teamId);
  const invite: Invitee[] = [];
  const errors: Record<string, string> = {};
  /** Invitees who have an invitation the caller does not see as theirs: answered as invited. */
  let covered = 0;
  for (const name of given) {
    const isEmail = Email.safeParse(name).success;
    if (!isEmail && !Username.safeParse(name.toLowerCase()).success) {
      errors[name] = "Not a valid username or email";
      continue;
    }
    const user = await findUserByLogin(trx, name);
    if (user && isEmail && !seesEmails) {
      // "Already a member" (or "already invited" by username) would tell the owner whose address
      // this is. Such an address gets what an unknown one gets: an invitation to the address that
      // nobody can accept; a new one goes to its account, as ever.
      const address = name.toLowerCase();
      if (pending.addresses.has(address)) errors[name] = "Already invited";
      else if (invite.some((i) => i.email?.toLowerCase() === address)) continue;
      else if ((await findMember(trx, teamId, user.id)) || pending.userIds.has(user.id)) {
        invite.push({ given: name, email: name });
      } else if (!invite.some((i) => "user" in i && i.user.id === user.id)) {
        invite.push({ given: name, user, email: name });
      } else invite.push({ given: name, email: name });
    } else if (user) {
      // The same user named twice (by username and by email): one invitation.
      if (invite.some((i) => "user" in i && i.user.id === user.id)) continue;
      const email = user.email?.toLowerCase();
      if (await findMember(trx, teamId, user.id)) errors[name] = "Already a member of the team";
      else if (!seesEmails && pending.addressedUserIds.has(user.id)) {
        // Invited through their address, which the owner sees as an address only: "already
        // invited" would tie the two together. They are invited; nothing new is made.
        covered++;
      } else if (pending.userIds.has(user.id)) errors[name] = "Already invited";
      else if (seesEmails && email && pending.emails.has(email)) errors[name] = "Already invited";
      else invite.push(isEmail ? { given: name, user, email: name } : { given: name, user });
    } else if (isEmail) {
      // Answered as for an account's email, so that inviting tells nobody whether an address has
      // an account. Emails are not verified, so such an invitation can be accepted by no one (an
      // invitation is the account's it was sent to), and no email is sent.
      if (pending.emails.has(name.toLowerCase())) errors[name] = "Already invited";
      else if (!invite.some((i) => i.email?.toLowerCase() === name.toLowerCase())) {
        invite.push({ given: name, email: name });
      }
    } else {
      errors[name] = "No user has this username";
    }
  }
  return { invite, errors, covered };
}

export const invitationRouter = router({
  list: procedure
    .meta({
      permission: "team:user:invite",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/invitations",
        tags: ["Team Invitations"],
        summary: "The team's pending invitations (owners)",
        description: `Oldest first; not paged. Invitations expire ${INVITATION_DAYS} days after they were last sent; expired ones are not listed.`,
      },
    })
    .input(TeamIdInput)
    .output(InvitationList)
    .query(async ({ ctx }) => {
      const rows = await listTeamInvitations(ctx.db, teamOf(ctx).team.id);
      return {
        meta: {},
        count: rows.length,
        invitations: rows.map((row) => invitationView(row, ctx.baseUrl, "team")),
      };
    }),

  create: procedure
    .meta({
      create: "replay",
      permission: "team:user:invite",
      errors: [429],
      openapi: {
        method: "POST",
        path: "/api/v1/teams/{teamId}/invitations",
        tags: ["Team Invitations"],
        summary: "Invite users by username or email (owners)",
        description: [
          `\`user\` names up to ${MAX_INVITEES} invitees (after removing repeats), comma-separated: usernames (of existing users) or emails (any case). An email is answered and listed the same whether an account has it or not, so inviting tells nobody that — nor whether the address is a member's or an invitee's (an owner sees members' and invitees' usernames, not their emails): the address of a member, or of a user already invited by username, gets an invitation nobody can accept, as an unknown one does; only an administrator acting as one, who sees every user's email, is told "Already a member of the team". The invitation is the account's that had the address when it was sent, and one sent to an address nobody had can be accepted by no one (no email is sent, and emails are not verified, so it cannot go to whoever puts the address on their profile later). Until they accept, the team sees only what an invitation was sent to (the username, or the email as typed). Invitees see their invitations in \`GET /api/v1/user/invitations\`.`,
          `More than ${MAX_INVITEES} invitees is 429 \`too_many_invites\` (as FlowFuse; it is not a rate limit, and has no Retry-After). A \`role\` other than 5, 10, 30 or 50 is 400 \`invalid_team_role\`.`,
          'When every invitee was invited: `{ status: "okay" }`. When only some were (the others already members, already invited, unknown usernames …): 200 `{ code: "invitation_failed", error: { <invitee>: <reason> } }`. When none was: 400 `invitation_failed`, the reasons in `errors`.',
          "When the team's type limits its members (`properties.users.limit`), members and pending invitations together must stay within it, else 400 `member_limit_reached` and nobody is invited.",
        ].join("\n\n"),
      },
    })
    .input(CreateInvitationInput)
    .output(InvitationResult)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const role = input.role ?? Role.member;
      if (!isTeamRole(role)) throw invalidTeamRole();
      const given = inviteesOf(input.user);
      if (given.length === 0) {
        throw new ApiError(400, "invalid_request", "Name at least one username or email", [
          { path: "user", message: "No username or email" },
        ]);
      }
      if (given.length > MAX_INVITEES) {
        throw new ApiError(
          429,
          "too_many_invites",
          `At most ${MAX_INVITEES} invitees per request; this one names ${given.length}`,
        );
      }

      const { invited, errors } = await ctx.db.transaction().execute(async (trx) => {
        if (!(await lockTeam(trx, teamId))) throw notFound();
        // Their names are free again: an expired invitation must not block a new one.
        await deleteExpiredInvitations(trx, teamId);
        const { invite, errors, covered } = await sortInvitees(
          trx,
          teamId,
          given,
          actsAsAdmin(ctx.auth),
        );
        if (invite.length === 0) return { invited: covered, errors };

        const limit = await memberLimit(trx, teamId);
        if (limit !== null) {
          const members = await countMembers(trx, teamId);
          const pending = await countPendingInvitations(trx, teamId);
          if (members + pending + invite.length > limit) {
            throw memberLimitReached(
              limit,
              `, pending invitations included: it has ${members} and ${pending} pending, room for ${Math.max(0, limit - members - pending)} more`,
            );
          }
        }
        const expiresAt = expiryFromNow();
        for (const invitee of invite) {
          const row = await insertInvitation(trx, {
            teamId,
            invitorId: ctx.auth.userId,
            invitee:
              "user" in invitee
                ? { userId: invitee.user.id, email: invitee.email }
                : { email: invitee.email },
            role,
            expiresAt,
          });
          await recordInvitationEvent(
            trx,
            "invited",
            actorOf(ctx),
            teamId,
            { id: row.id, role },
            "user" in invitee && invitee.email === undefined
              ? { id: invitee.user.id, username: invitee.user.username }
              : { email: invitee.email },
          );
        }
        return { invited: invite.length + covered, errors };
      });

      const failed = Object.entries(errors);
      if (invited === 0) {
        throw new ApiError(
          400,
          "invitation_failed",
          `Nobody was invited: ${failed.map(([name, reason]) => `${name}: ${reason}`).join("; ")}`,
          failed.map(([name, reason]) => ({ path: "user", message: `${name}: ${reason}` })),
        );
      }
      if (failed.length > 0) return { code: "invitation_failed" as const, error: errors };
      return { status: "okay" as const };
    }),

  resend: procedure
    .meta({
      permission: "team:user:invite",
      openapi: {
        method: "POST",
        path: "/api/v1/teams/{teamId}/invitations/{invitationId}",
        tags: ["Team Invitations"],
        summary: "Send an invitation again: it expires 7 days from now (owners)",
        description:
          "Sets `sentAt` to now and `expiresAt` to 7 days later. An expired invitation is 404: invite again instead.",
      },
    })
    .input(TeamInvitationInput)
    .output(Invitation)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const found = await findTeamInvitation(ctx.db, teamId, input.invitationId);
      if (!found) throw notFound();
      const renewed = await ctx.db.transaction().execute(async (trx) => {
        if (!(await renewInvitation(trx, found.id, expiryFromNow()))) throw notFound();
        const invitee = auditInvitee(found);
        await recordInvitationEvent(trx, "invite-resent", actorOf(ctx), teamId, found, invitee);
        return findTeamInvitation(trx, teamId, found.id);
      });
      if (!renewed) throw notFound();
      return invitationView(renewed, ctx.baseUrl, "team");
    }),

  revoke: procedure
    .meta({
      permission: "team:user:invite",
      openapi: {
        method: "DELETE",
        path: "/api/v1/teams/{teamId}/invitations/{invitationId}",
        tags: ["Team Invitations"],
        summary: "Revoke an invitation (owners)",
      },
    })
    .input(TeamInvitationInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const found = await findTeamInvitation(ctx.db, teamId, input.invitationId);
      if (!found) throw notFound();
      await ctx.db.transaction().execute(async (trx) => {
        if (!(await deleteInvitation(trx, found.id))) throw notFound();
        const invitee = auditInvitee(found);
        await recordInvitationEvent(trx, "uninvited", actorOf(ctx), teamId, found, invitee);
      });
      return { status: "okay" as const };
    }),

  ...invitationAnswerProcedures,
});

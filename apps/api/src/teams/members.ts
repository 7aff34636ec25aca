// Team members: who is in a team, changing a member's role, and removing a member (or leaving).
// A team always keeps an owner: the check locks the owners' memberships in the change's
// transaction, so two requests cannot each demote or remove a different last owner.
import {
  ChangeMemberRoleInput,
  isTeamRole,
  Role,
  Status,
  TeamIdInput,
  type TeamMember,
  TeamMemberInput,
  TeamMemberList,
  type UserSummary,
} from "@flowplane/contract";
import {
  findMember,
  type InvitationUser,
  listMembers,
  lockTeamOwners,
  type MemberRow,
  deleteEditorSessionsInTeam,
  removeMember,
  setMemberRole,
} from "@flowplane/db";
import { ApiError, forbidden, notFound } from "../core/errors";
import { actorOf, procedure, router, teamOf } from "../core/trpc";
import { recordMemberEvent } from "./events";

export function userSummaryView(row: InvitationUser): UserSummary {
  return {
    id: row.id,
    username: row.username,
    name: row.name,
    admin: row.admin,
    createdAt: row.created_at.toISOString(),
    suspended: row.suspended,
  };
}

function memberView(row: MemberRow): TeamMember {
  return { ...userSummaryView(row), role: row.role as TeamMember["role"] };
}

export const invalidTeamRole = () =>
  new ApiError(400, "invalid_team_role", "The role must be 5, 10, 30 or 50", [
    { path: "role", message: "Not a team role (5, 10, 30 or 50)" },
  ]);

export const memberRouter = router({
  list: procedure
    .meta({
      permission: "team:user:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/members",
        tags: ["Team Members"],
        summary: "The team's members, with their roles (viewers and up)",
        description: "Sorted by username; not paged.",
      },
    })
    .input(TeamIdInput)
    .output(TeamMemberList)
    .query(async ({ ctx }) => {
      const rows = await listMembers(ctx.db, teamOf(ctx).team.id);
      return { meta: {}, count: rows.length, members: rows.map(memberView) };
    }),

  setRole: procedure
    .meta({
      permission: "team:user:change-role",
      openapi: {
        method: "PUT",
        path: "/api/v1/teams/{teamId}/members/{userId}",
        tags: ["Team Members"],
        summary: "Change a member's role (owners)",
        description:
          "`role` is 5 (dashboard), 10 (viewer), 30 (member) or 50 (owner); any other is 400 `invalid_team_role`. Demoting the team's only owner is 403 `invalid_request`, as in FlowFuse: make someone else an owner first. A user who is not a member is 404.",
      },
    })
    .input(ChangeMemberRoleInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      await ctx.db.transaction().execute(async (trx) => {
        const owners = await lockTeamOwners(trx, teamId);
        const member = await findMember(trx, teamId, input.userId);
        // An unknown member first: a bad role for nobody is still nobody (404).
        if (!member) throw notFound();
        if (!isTeamRole(input.role)) throw invalidTeamRole();
        if (member.role === input.role) return;
        if (input.role < Role.owner && owners.length === 1 && owners[0] === member.id) {
          throw forbidden(
            "The team's only owner cannot be demoted: make someone else an owner first",
            "invalid_request",
          );
        }
        if (!(await setMemberRole(trx, teamId, member.id, input.role))) throw notFound();
        await recordMemberEvent(trx, "role-changed", actorOf(ctx), teamId, member, {
          old: member.role,
          new: input.role,
        });
      });
      return { status: "okay" as const };
    }),

  remove: procedure
    .meta({
      permission: "team:user:remove",
      openapi: {
        method: "DELETE",
        path: "/api/v1/teams/{teamId}/members/{userId}",
        tags: ["Team Members"],
        summary: "Remove a member (owners), or leave the team (any member, their own userId)",
        description:
          "The member loses access at once: their tokens and sessions get 404 for the team on their next request, their sessions in the team's instances' editors end, and their tokens no longer name it in a team restriction. The team's only owner cannot be removed (400 `invalid_request`): make someone else an owner first. A user who is not a member is 404.",
      },
    })
    .input(TeamMemberInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      await ctx.db.transaction().execute(async (trx) => {
        const owners = await lockTeamOwners(trx, teamId);
        const member = await findMember(trx, teamId, input.userId);
        if (!member) throw notFound();
        if (owners.length === 1 && owners[0] === member.id) {
          throw new ApiError(
            400,
            "invalid_request",
            "The team's only owner cannot be removed: make someone else an owner first",
          );
        }
        if (!(await removeMember(trx, teamId, member.id))) throw notFound();
        // Their editor sessions on the team's instances end: joining again does not revive one.
        await deleteEditorSessionsInTeam(trx, member.id, teamId);
        await recordMemberEvent(trx, "removed", actorOf(ctx), teamId, member, member.role);
      });
      return { status: "okay" as const };
    }),
});

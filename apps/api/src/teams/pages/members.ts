// A team's members and, for its owners, its invitations: GET /teams/:teamId/members, and the forms
// that change a role, remove a member (or leave), invite, and resend or revoke an invitation. Each
// calls the API's own procedure as the signed-in user: its permission check (owners; anyone for
// leaving), its rules (the last owner stays) and its messages.
import type { InvitationResult } from "@flowplane/contract";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { router } from "../../core/trpc";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendFailure, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { invitationRouter } from "../invitations";
import { memberRouter } from "../members";
import { teamRouter } from "../team";
import { ROLE_CHOICES, roleLabel } from "./roles";
import { teamPlace } from "./team";

// The same procedures under the same names as the API's router (rate limits count by them).
const memberProcedures = router({
  team: teamRouter,
  member: memberRouter,
  invitation: invitationRouter,
});

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  memberProcedures.createCaller(deps.context(request));

const NOTICES: Record<string, string> = {
  role: "The role is changed.",
  removed: "The member is removed from the team.",
  invited: "Invited. They will find the invitation on their Teams page.",
  resent: "The invitation is sent again, for another 7 days.",
  revoked: "The invitation is revoked.",
};

type TeamParams = { teamId: string };
type MemberParams = TeamParams & { userId: string };
type InvitationParams = TeamParams & { invitationId: string };

interface MembersState {
  invite?: { user: string; role: string };
  inviteError?: FormError;
  /** Invitees left out of an invitation that reached others. */
  notInvited?: string[];
  memberError?: FormError;
}

export function memberPages(app: FastifyInstance, deps: PageDeps) {
  const membersPage = (request: FastifyRequest<{ Params: TeamParams }>) =>
    `/teams/${encodeURIComponent(request.params.teamId)}/members`;
  const route = {
    ...pageRoute,
    preHandler: signedIn({ page: "/teams" }),
  };

  async function renderMembers(
    request: FastifyRequest<{ Params: TeamParams }>,
    reply: FastifyReply,
    state: MembersState = {},
  ) {
    const caller = callerOf(deps, request);
    const { teamId } = request.params;
    const place = await teamPlace(caller.team, teamId);
    const [members, invitations] = await Promise.all([
      caller.member.list({ teamId }),
      place.can("team:user:invite") ? caller.invitation.list({ teamId }) : undefined,
    ]);
    const failed = state.inviteError ?? state.memberError;
    return sendPage(
      deps,
      request,
      reply,
      "teams/pages/members",
      {
        title: `Members · ${place.team.name}`,
        place,
        tab: "members",
        me: request.auth!.userId,
        members: members.members,
        invitations: invitations?.invitations,
        invite: state.invite ?? { user: "", role: "30" },
        inviteError: state.inviteError,
        notInvited: state.notInvited,
        memberError: state.memberError,
        notice: failed ? undefined : noticeOf(request, NOTICES),
        roles: ROLE_CHOICES,
        roleLabel,
      },
      failed?.status ?? 200,
    );
  }

  app.get<{ Params: TeamParams }>("/teams/:teamId/members", route, (request, reply) =>
    renderMembers(request, reply),
  );

  app.post<{ Params: MemberParams }>(
    "/teams/:teamId/members/:userId/role",
    route,
    async (request, reply) => {
      const { teamId, userId } = request.params;
      try {
        await callerOf(deps, request).member.setRole({
          teamId,
          userId,
          role: Number(field(request.body, "role") ?? ""),
        });
      } catch (error) {
        return renderMembers(request, reply, { memberError: formError(request, reply, error) });
      }
      return reply.redirect(`${membersPage(request)}?done=role`, 303);
    },
  );

  app.post<{ Params: MemberParams }>(
    "/teams/:teamId/members/:userId/remove",
    route,
    async (request, reply) => {
      const caller = callerOf(deps, request);
      const { teamId, userId } = request.params;
      const leaving = userId === request.auth!.userId;
      if (field(request.body, "confirmed") !== "yes") {
        // No script ran to ask: ask on a page.
        const place = await teamPlace(caller.team, teamId);
        const member = (await caller.member.list({ teamId })).members.find((m) => m.id === userId);
        if (!member) return reply.redirect(membersPage(request), 303);
        return sendPage(deps, request, reply, "teams/pages/remove", {
          title: leaving ? "Leave the team" : "Remove a member",
          place,
          member,
          leaving,
        });
      }
      try {
        await caller.member.remove({ teamId, userId });
      } catch (error) {
        return renderMembers(request, reply, { memberError: formError(request, reply, error) });
      }
      return reply.redirect(
        leaving ? "/teams?done=left" : `${membersPage(request)}?done=removed`,
        303,
      );
    },
  );

  app.post<{ Params: TeamParams }>("/teams/:teamId/invitations", route, async (request, reply) => {
    const invite = {
      user: field(request.body, "user") ?? "",
      role: field(request.body, "role") ?? "",
    };
    let result: InvitationResult;
    try {
      result = await callerOf(deps, request).invitation.create({
        teamId: request.params.teamId,
        user: invite.user,
        role: Number(invite.role),
      });
    } catch (error) {
      return renderMembers(request, reply, {
        invite,
        inviteError: formError(request, reply, error),
      });
    }
    if ("code" in result) {
      // Some were invited, some not: say which were not, and why.
      const notInvited = Object.entries(result.error).map(([name, why]) => `${name}: ${why}`);
      return renderMembers(request, reply, { notInvited });
    }
    return reply.redirect(`${membersPage(request)}?done=invited`, 303);
  });

  for (const [action, done] of [
    ["resend", "resent"],
    ["revoke", "revoked"],
  ] as const) {
    app.post<{ Params: InvitationParams }>(
      `/teams/:teamId/invitations/:invitationId/${action}`,
      route,
      async (request, reply) => {
        const { teamId, invitationId } = request.params;
        try {
          await callerOf(deps, request).invitation[action]({ teamId, invitationId });
        } catch (error) {
          return sendFailure(deps, request, reply, error, `The invitation was not ${done}`, {
            href: membersPage(request),
            label: "Back to the members",
          });
        }
        return reply.redirect(`${membersPage(request)}?done=${done}`, 303);
      },
    );
  }
}

// The person's teams (GET /teams, where the pages' links start): the teams they belong to with
// their role, the invitations they have received (accept, reject), and a form that creates a team.
// Every change is a form POST calling the API's own procedure as the signed-in user.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { router } from "../../core/trpc";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, sendFailure, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { invitationRouter } from "../../teams/index";
import { roleLabel } from "../../teams/index";
import { teamRouter } from "../../teams/index";
import { userRouter } from "../user";
import type { AccountPageDeps as PageDeps } from "./caller";

// The same procedures under the same names as the API's router (rate limits count by them).
const teamsProcedures = router({
  user: userRouter,
  team: teamRouter,
  invitation: invitationRouter,
});

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  teamsProcedures.createCaller(deps.context(request));

const NOTICES: Record<string, string> = {
  rejected: "The invitation is rejected.",
  left: "You have left the team.",
  deleted: "The team is deleted.",
};

const BACK = { href: "/teams", label: "Back to your teams" };

export function teamsPages(app: FastifyInstance, deps: PageDeps) {
  const teamsPage = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };

  async function renderTeams(
    request: FastifyRequest,
    reply: FastifyReply,
    state: { name?: string; error?: FormError } = {},
  ) {
    const caller = callerOf(deps, request);
    const [teams, invitations] = await Promise.all([caller.user.teams(), caller.invitation.mine()]);
    return sendPage(
      deps,
      request,
      reply,
      "accounts/pages/teams",
      {
        title: "Teams",
        teams: teams.teams,
        invitations: invitations.invitations,
        name: state.name ?? "",
        error: state.error,
        notice: state.error ? undefined : noticeOf(request, NOTICES),
        roleLabel,
      },
      state.error?.status ?? 200,
    );
  }

  // The platform's front page is the person's teams.
  app.get("/", pageRoute, async (_request, reply) => reply.redirect("/teams", 303));

  app.get("/teams", teamsPage, (request, reply) => renderTeams(request, reply));

  app.post("/teams", teamsPage, async (request, reply) => {
    const name = field(request.body, "name") ?? "";
    try {
      const team = await callerOf(deps, request).team.create({ name });
      return reply.redirect(`/teams/${team.id}?done=created`, 303);
    } catch (error) {
      return renderTeams(request, reply, { name, error: formError(request, reply, error) });
    }
  });

  app.post<{ Params: { invitationId: string } }>(
    "/teams/invitations/:invitationId/accept",
    teamsPage,
    async (request, reply) => {
      const caller = callerOf(deps, request);
      const { invitationId } = request.params;
      try {
        // The team it leads to; an invitation that is not the caller's is the API's 404 below.
        const { invitations } = await caller.invitation.mine();
        const team = invitations.find((invitation) => invitation.id === invitationId)?.team;
        await caller.invitation.accept({ invitationId });
        return reply.redirect(team ? `/teams/${team.id}?done=joined` : "/teams", 303);
      } catch (error) {
        return sendFailure(deps, request, reply, error, "The invitation was not accepted", BACK);
      }
    },
  );

  app.post<{ Params: { invitationId: string } }>(
    "/teams/invitations/:invitationId/reject",
    teamsPage,
    async (request, reply) => {
      try {
        await callerOf(deps, request).invitation.reject({
          invitationId: request.params.invitationId,
        });
        return reply.redirect("/teams?done=rejected", 303);
      } catch (error) {
        return sendFailure(deps, request, reply, error, "The invitation was not rejected", BACK);
      }
    },
  );
}

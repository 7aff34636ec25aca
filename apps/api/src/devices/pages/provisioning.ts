// A team's provisioning tokens (GET /teams/:teamId/devices/provisioning, owners): the list (never
// their values), creating one — its value and the device.yml every device starts from are shown
// in that one reply only — and revoking one (asked first: the script's confirm(), or a page of
// its own without script). Everything is the API's provisioning procedures, as the signed-in user.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { applicationsRouter } from "../../applications/index";
import { router } from "../../core/trpc";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendFailure, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { teamPlace, teamRouter } from "../../teams/index";
import { provisioningRouter } from "../provisioning";

// The same procedures under the same names as the API's router (rate limits count by them).
const provisioningProcedures = router({
  team: teamRouter,
  applications: applicationsRouter,
  provisioningTokens: provisioningRouter,
});

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  provisioningProcedures.createCaller(deps.context(request));

const NOTICES: Record<string, string> = { deleted: "The provisioning token is revoked." };

type Params = { teamId: string };
type TokenParams = Params & { tokenId: string };

interface Sent {
  name: string;
  owner: string;
  expiresAt: string;
}

const EMPTY: Sent = { name: "", owner: "", expiresAt: "" };

const pathOf = (teamId: string) => `/teams/${encodeURIComponent(teamId)}/devices/provisioning`;

export function provisioningPages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };

  async function renderTokens(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    state: { sent?: Sent; error?: FormError; created?: { name: string; yml: string } } = {},
  ) {
    const caller = callerOf(deps, request);
    const { teamId } = request.params;
    const place = await teamPlace(caller.team, teamId);
    // The API's own refusal (403 for members and viewers) is the page's.
    const [tokens, applications] = await Promise.all([
      caller.provisioningTokens.list({ teamId }),
      caller.applications.ofTeam({ teamId }),
    ]);
    const names = new Map<string, string>();
    for (const application of applications.applications) {
      names.set(application.id, `Application ${application.name}`);
      for (const instance of application.instances ?? []) {
        names.set(instance.id, `Instance ${instance.name}`);
      }
    }
    return sendPage(
      deps,
      request,
      reply,
      "devices/pages/provisioning",
      {
        title: `Provisioning tokens · ${place.team.name}`,
        place,
        tokens: tokens.tokens.map((token) => ({
          ...token,
          assigned: names.get(token.application ?? token.instance ?? "") ?? "None",
        })),
        applications: applications.applications,
        sent: state.sent ?? EMPTY,
        error: state.error,
        created: state.created,
        notice: state.error || state.created ? undefined : noticeOf(request, NOTICES),
        today: new Date().toISOString().slice(0, 10),
      },
      state.error?.status ?? 200,
    );
  }

  app.get<{ Params: Params }>("/teams/:teamId/devices/provisioning", route, (request, reply) =>
    renderTokens(request, reply),
  );

  app.post<{ Params: Params }>(
    "/teams/:teamId/devices/provisioning",
    route,
    async (request, reply) => {
      const { teamId } = request.params;
      const sent: Sent = {
        name: field(request.body, "name") ?? "",
        owner: field(request.body, "owner") ?? "",
        expiresAt: field(request.body, "expiresAt") ?? "",
      };
      const [kind, id] = sent.owner.split(":");
      try {
        const created = await callerOf(deps, request).provisioningTokens.create({
          teamId,
          name: sent.name,
          ...(kind === "application" && id && { application: id }),
          ...(kind === "instance" && id && { instance: id }),
          // The end of that day (UTC).
          ...(sent.expiresAt !== "" && { expiresAt: `${sent.expiresAt}T23:59:59Z` }),
        });
        const { baseUrl } = deps.context(request);
        const yml = [
          `provisioningName: ${JSON.stringify(created.name)}`,
          `provisioningTeam: ${teamId}`,
          `provisioningToken: ${created.token}`,
          `forgeURL: ${baseUrl}`,
          "",
        ].join("\n");
        // The value goes into this reply only (never kept, never logged).
        reply.header("cache-control", "no-store");
        return await renderTokens(request, reply, { created: { name: created.name, yml } });
      } catch (error) {
        return renderTokens(request, reply, { sent, error: formError(request, reply, error) });
      }
    },
  );

  app.post<{ Params: TokenParams }>(
    "/teams/:teamId/devices/provisioning/:tokenId/delete",
    route,
    async (request, reply) => {
      const { teamId, tokenId } = request.params;
      const caller = callerOf(deps, request);
      const back = { href: pathOf(teamId), label: "Back to the provisioning tokens" };
      try {
        if (field(request.body, "confirmed") !== "yes") {
          // No script ran to ask: ask on a page.
          const place = await teamPlace(caller.team, teamId);
          const token = (await caller.provisioningTokens.list({ teamId })).tokens.find(
            (one) => one.id === tokenId,
          );
          if (!token) return reply.redirect(pathOf(teamId), 303);
          return sendPage(deps, request, reply, "devices/pages/provisioning-delete", {
            title: "Revoke a provisioning token",
            place,
            token,
          });
        }
        await caller.provisioningTokens.delete({ teamId, tokenId });
      } catch (error) {
        return sendFailure(deps, request, reply, error, "The token was not revoked", back);
      }
      return reply.redirect(`${pathOf(teamId)}?done=deleted`, 303);
    },
  );
}

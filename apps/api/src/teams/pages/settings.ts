// A team's settings (GET /teams/:teamId/settings): its name, slug and type; the forms that rename
// it (owners: `team.update`) and delete it with everything in it (owners: `team.delete`, asked
// first). Members and viewers read the same facts without the forms. The API has no procedure
// that changes a team's type, so the page only shows it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { router } from "../../core/trpc";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { teamRouter } from "../team";
import { teamPlace } from "./team";

// The same procedures under the same names as the API's router (rate limits count by them).
const settingsProcedures = router({ team: teamRouter });

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  settingsProcedures.createCaller(deps.context(request));

const NOTICES: Record<string, string> = { saved: "The team's settings are saved." };

type Params = { teamId: string };

interface SettingsState {
  form?: { name: string; slug: string };
  formError?: FormError;
  deleteError?: FormError;
}

export function settingsPages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };
  const settingsPage = (teamId: string) => `/teams/${encodeURIComponent(teamId)}/settings`;

  async function renderSettings(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    state: SettingsState = {},
  ) {
    const place = await teamPlace(callerOf(deps, request).team, request.params.teamId);
    const failed = state.formError ?? state.deleteError;
    return sendPage(
      deps,
      request,
      reply,
      "teams/pages/settings",
      {
        title: `Settings · ${place.team.name}`,
        place,
        form: state.form ?? { name: place.team.name, slug: place.team.slug },
        formError: state.formError,
        deleteError: state.deleteError,
        deleteQuestion: deleteQuestion(place.team.name, place.team.slug),
        notice: failed ? undefined : noticeOf(request, NOTICES),
      },
      failed?.status ?? 200,
    );
  }

  app.get<{ Params: Params }>("/teams/:teamId/settings", route, (request, reply) =>
    renderSettings(request, reply),
  );

  app.post<{ Params: Params }>("/teams/:teamId/settings", route, async (request, reply) => {
    const form = {
      name: field(request.body, "name") ?? "",
      slug: field(request.body, "slug") ?? "",
    };
    try {
      await callerOf(deps, request).team.update({ teamId: request.params.teamId, ...form });
    } catch (error) {
      return renderSettings(request, reply, { form, formError: formError(request, reply, error) });
    }
    return reply.redirect(`${settingsPage(request.params.teamId)}?done=saved`, 303);
  });

  app.post<{ Params: Params }>("/teams/:teamId/delete", route, async (request, reply) => {
    const caller = callerOf(deps, request);
    const { teamId } = request.params;
    if (field(request.body, "confirmed") !== "yes") {
      // No script ran to ask: ask on a page.
      const place = await teamPlace(caller.team, teamId);
      return sendPage(deps, request, reply, "teams/pages/confirm", {
        title: "Delete the team",
        question: deleteQuestion(place.team.name, place.team.slug),
        action: `/teams/${place.team.id}/delete`,
        button: "Delete the team",
        back: settingsPage(teamId),
      });
    }
    try {
      await caller.team.delete({ teamId });
    } catch (error) {
      return renderSettings(request, reply, { deleteError: formError(request, reply, error) });
    }
    return reply.redirect("/teams?done=deleted", 303);
  });
}

/** What deleting a team asks, on its page and in the script's confirm(). */
export const deleteQuestion = (name: string, slug: string) =>
  `Delete the team “${name}” (${slug}) with its applications, instances, devices, library and broker clients? This cannot be undone.`;

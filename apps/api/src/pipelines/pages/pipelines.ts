// The team's pipelines (GET /teams/:teamId/pipelines): every pipeline of the team's applications,
// with its application and its stages in order; the form that creates one. One pipeline's page is
// in pipeline.ts. Everything is the API's own procedures, called as the signed-in user.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { invalidRequest } from "../../core/errors";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { teamPlace } from "../../teams/index";
import { pipelineCallerOf, pipelinesPath } from "./caller";
import { pipelinePage } from "./pipeline";

type Params = { teamId: string };

const NOTICES: Record<string, string> = {
  deleted: "The pipeline is deleted. Its stages' instances and snapshots stay.",
};

interface ListState {
  pipeline?: { applicationId: string; name: string };
  createError?: FormError;
}

export function pipelinePages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };

  async function renderPipelines(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    state: ListState = {},
  ) {
    const caller = pipelineCallerOf(deps, request);
    const { teamId } = request.params;
    const place = await teamPlace(caller.team, teamId);
    const pipelines = place.can("team:pipeline:list")
      ? (await caller.pipelines.ofTeam({ teamId })).pipelines
      : undefined;
    const applications = place.can("pipeline:create")
      ? (await caller.applications.ofTeam({ teamId })).applications
      : [];
    return sendPage(
      deps,
      request,
      reply,
      "pipelines/pages/pipelines",
      {
        title: `Pipelines · ${place.team.name}`,
        place,
        pipelines,
        applications,
        pipeline: state.pipeline ?? { applicationId: "", name: "" },
        createError: state.createError,
        notice: state.createError ? undefined : noticeOf(request, NOTICES),
      },
      state.createError?.status ?? 200,
    );
  }

  app.get<{ Params: Params }>("/teams/:teamId/pipelines", route, (request, reply) =>
    renderPipelines(request, reply),
  );

  app.post<{ Params: Params }>("/teams/:teamId/pipelines", route, async (request, reply) => {
    const caller = pipelineCallerOf(deps, request);
    const { teamId } = request.params;
    const pipeline = {
      applicationId: field(request.body, "applicationId") ?? "",
      name: field(request.body, "name") ?? "",
    };
    let id: string;
    try {
      // The application must be this team's: the procedure would otherwise create the pipeline in
      // whichever of the caller's teams owns it.
      const { applications } = await caller.applications.ofTeam({ teamId });
      if (!applications.some((application) => application.id === pipeline.applicationId)) {
        throw invalidRequest("No such application in this team", [
          { path: "applicationId", message: "Not an application of this team" },
        ]);
      }
      ({ id } = await caller.pipelines.create(pipeline));
    } catch (error) {
      return renderPipelines(request, reply, {
        pipeline,
        createError: formError(request, reply, error),
      });
    }
    return reply.redirect(`${pipelinesPath(teamId)}/${encodeURIComponent(id)}?done=created`, 303);
  });

  pipelinePage(app, deps, route);
}

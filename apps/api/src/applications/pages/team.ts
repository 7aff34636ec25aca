// A team's page (GET /teams/:teamId): its applications, each with its instances, their state and a
// link to each one's editor; the forms that create an application and an instance, and that start,
// stop and restart an instance. What is shown follows the permissions the caller's role grants;
// what is done is the API's own procedure, called as the signed-in user (its permission check,
// its validation, its audit entry).
import type { InstanceState } from "@flowplane/contract";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { invalidRequest, notFound } from "../../core/errors";
import { router } from "../../core/trpc";
import { instancesRouter } from "../../instances/index";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { teamPlace } from "../../teams/index";
import { teamRouter } from "../../teams/index";
import { applicationsRouter } from "../procedures";

// The same procedures under the same names as the API's router (rate limits count by them).
const teamProcedures = router({
  team: teamRouter,
  applications: applicationsRouter,
  instances: instancesRouter,
});

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  teamProcedures.createCaller(deps.context(request));

const NOTICES: Record<string, string> = {
  created: "The team is created. You are its owner.",
  joined: "You have joined the team.",
  application: "The application is created.",
  instance: "The instance is created and starting.",
  started: "The instance is started.",
  stopped: "The instance is stopped.",
  restarted: "The instance is restarted.",
  deleted: "The instance is deleted.",
};

/** The actions the page offers, each with the notice that follows it. */
const ACTIONS = { start: "started", stop: "stopped", restart: "restarted" } as const;
type PageAction = keyof typeof ACTIONS;

/** States in which an action is under way: the page's script watches them settle. */
const ACTING = new Set<InstanceState>(["starting", "stopping", "restarting", "suspending"]);

/**
 * The actions that make sense in a state (the API refuses the rest with its own message). None
 * while one is under way, or while no runtime reports the state (`unknown`: no driver).
 */
function actionsIn(state: InstanceState): PageAction[] {
  if (ACTING.has(state) || state === "unknown") return [];
  return state === "running" ? ["restart", "stop"] : ["start"];
}

type TeamParams = { teamId: string };

interface TeamState {
  application?: { name: string; description: string };
  applicationError?: FormError;
  /** The instance form as sent, and its error, shown in the application it was for. */
  instance?: { name: string; applicationId: string };
  instanceError?: FormError;
  actionError?: FormError;
}

export function teamPages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };
  const teamPage = (teamId: string) => `/teams/${encodeURIComponent(teamId)}`;

  /** The team's applications with their instances, each with its state. */
  async function applicationsOf(caller: ReturnType<typeof callerOf>, teamId: string) {
    const [applications, states] = await Promise.all([
      caller.applications.ofTeam({ teamId }),
      caller.applications.statusOfTeam({ teamId }),
    ]);
    const stateOf = new Map(
      states.applications.flatMap((application) =>
        application.instances.map((instance) => [instance.id, instance.meta.state] as const),
      ),
    );
    return applications.applications.map((application) => ({
      ...application,
      instances: application.instances.map((instance) => {
        const state = stateOf.get(instance.id) ?? "unknown";
        return { ...instance, state, actions: actionsIn(state) };
      }),
    }));
  }

  async function renderTeam(
    request: FastifyRequest<{ Params: TeamParams }>,
    reply: FastifyReply,
    state: TeamState = {},
  ) {
    const caller = callerOf(deps, request);
    const { teamId } = request.params;
    const place = await teamPlace(caller.team, teamId);
    const applications = place.can("team:projects:list")
      ? await applicationsOf(caller, teamId)
      : undefined;
    const failed = state.applicationError ?? state.instanceError ?? state.actionError;
    const acting = applications?.some((application) =>
      application.instances.some((instance) => ACTING.has(instance.state)),
    );
    return sendPage(
      deps,
      request,
      reply,
      "applications/pages/team",
      {
        title: place.team.name,
        place,
        tab: "applications",
        applications,
        application: state.application ?? { name: "", description: "" },
        applicationError: state.applicationError,
        instance: state.instance,
        instanceError: state.instanceError,
        actionError: state.actionError,
        notice: failed ? undefined : noticeOf(request, NOTICES),
        // Where the script asks for the states until they settle (not over a failed form, whose
        // message a reload would lose).
        watch: acting && !failed ? `/api/v1/teams/${teamId}/applications/status` : undefined,
      },
      failed?.status ?? 200,
    );
  }

  app.get<{ Params: TeamParams }>("/teams/:teamId", route, (request, reply) =>
    renderTeam(request, reply),
  );

  app.post<{ Params: TeamParams }>("/teams/:teamId/applications", route, async (request, reply) => {
    const { teamId } = request.params;
    const application = {
      name: field(request.body, "name") ?? "",
      description: field(request.body, "description") ?? "",
    };
    try {
      await callerOf(deps, request).applications.create({
        teamId,
        name: application.name,
        ...(application.description.trim() !== "" && { description: application.description }),
      });
    } catch (error) {
      return renderTeam(request, reply, {
        application,
        applicationError: formError(request, reply, error),
      });
    }
    return reply.redirect(`${teamPage(teamId)}?done=application`, 303);
  });

  app.post<{ Params: TeamParams }>("/teams/:teamId/instances", route, async (request, reply) => {
    const caller = callerOf(deps, request);
    const { teamId } = request.params;
    const instance = {
      name: field(request.body, "name") ?? "",
      applicationId: field(request.body, "applicationId") ?? "",
    };
    try {
      // The application must be this team's (the page posts one of them): the procedure would
      // otherwise create the instance in whichever of the caller's teams owns it.
      const { applications } = await caller.applications.ofTeam({ teamId });
      if (!applications.some((application) => application.id === instance.applicationId)) {
        throw invalidRequest("No such application in this team", [
          { path: "applicationId", message: "Not an application of this team" },
        ]);
      }
      await caller.instances.create(instance);
    } catch (error) {
      return renderTeam(request, reply, {
        instance,
        instanceError: formError(request, reply, error),
      });
    }
    return reply.redirect(`${teamPage(teamId)}?done=instance`, 303);
  });

  app.post<{ Params: TeamParams & { instanceId: string; action: string } }>(
    "/teams/:teamId/instances/:instanceId/:action",
    route,
    async (request, reply) => {
      const caller = callerOf(deps, request);
      const { teamId, instanceId, action } = request.params;
      if (!Object.hasOwn(ACTIONS, action)) throw notFound();
      try {
        // An instance of another team is not this page's to act on, whichever the caller's role.
        const instance = await caller.instances.get({ instanceId });
        if (instance.team.id !== teamId) throw notFound();
        await caller.instances[action as PageAction]({ instanceId });
      } catch (error) {
        return renderTeam(request, reply, { actionError: formError(request, reply, error) });
      }
      return reply.redirect(`${teamPage(teamId)}?done=${ACTIONS[action as PageAction]}`, 303);
    },
  );
}

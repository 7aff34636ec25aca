// The team's device groups (GET /teams/:teamId/device-groups): every group of the team's
// applications, each with its application (names repeat across applications), its member count and
// target snapshot; the form that creates one. One group's page is in group.ts. Everything is the
// API's own procedures (deviceGroups.*), called as the signed-in user.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { invalidRequest } from "../../core/errors";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, type PageRoutes, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { teamPlace } from "../../teams/index";
import { groupPage } from "./group";
import { type ApplicationSnapshots, groupCallerOf, groupsOfTeam, groupsPath } from "./group-caller";

type Params = { teamId: string };

const NOTICES: Record<string, string> = {
  deleted: "The device group is deleted. Its devices stay, each running its own target again.",
};

interface ListState {
  group?: { applicationId: string; name: string; description: string };
  createError?: FormError;
}

export function deviceGroupPages(snapshotsOf: ApplicationSnapshots): PageRoutes {
  return (app: FastifyInstance, deps: PageDeps) => {
    const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };

    async function renderGroups(
      request: FastifyRequest<{ Params: Params }>,
      reply: FastifyReply,
      state: ListState = {},
    ) {
      const caller = groupCallerOf(deps, request);
      const { teamId } = request.params;
      const place = await teamPlace(caller.team, teamId);
      const groups = place.can("team:device-group:list")
        ? await groupsOfTeam(caller, teamId)
        : undefined;
      const applications = place.can("application:device-group:create")
        ? (await caller.applications.ofTeam({ teamId })).applications
        : [];
      return sendPage(
        deps,
        request,
        reply,
        "devices/pages/groups",
        {
          title: `Device groups · ${place.team.name}`,
          place,
          groups,
          applications,
          group: state.group ?? { applicationId: "", name: "", description: "" },
          createError: state.createError,
          notice: state.createError ? undefined : noticeOf(request, NOTICES),
        },
        state.createError?.status ?? 200,
      );
    }

    app.get<{ Params: Params }>("/teams/:teamId/device-groups", route, (request, reply) =>
      renderGroups(request, reply),
    );

    app.post<{ Params: Params }>("/teams/:teamId/device-groups", route, async (request, reply) => {
      const caller = groupCallerOf(deps, request);
      const { teamId } = request.params;
      const group = {
        applicationId: field(request.body, "applicationId") ?? "",
        name: field(request.body, "name") ?? "",
        description: field(request.body, "description") ?? "",
      };
      let id: string;
      try {
        // The application must be this team's: the procedure would otherwise create the group in
        // whichever of the caller's teams owns it.
        const { applications } = await caller.applications.ofTeam({ teamId });
        if (!applications.some((application) => application.id === group.applicationId)) {
          throw invalidRequest("No such application in this team", [
            { path: "applicationId", message: "Not an application of this team" },
          ]);
        }
        ({ id } = await caller.deviceGroups.create({
          applicationId: group.applicationId,
          name: group.name,
          ...(group.description.trim() !== "" && { description: group.description }),
        }));
      } catch (error) {
        return renderGroups(request, reply, {
          group,
          createError: formError(request, reply, error),
        });
      }
      return reply.redirect(`${groupsPath(teamId)}/${encodeURIComponent(id)}?done=created`, 303);
    });

    groupPage(app, deps, route, snapshotsOf);
  };
}

// A hosted instance's page (GET /teams/:teamId/instances/:instanceId): its state and the forms
// that start, stop, restart and suspend it; its editor's link; its Node-RED log (the kept lines in
// the page, then followed by its script); its variables (instance-env.ts), its name, its snapshots
// (instance-snapshots.ts), the devices that follow it, and deleting it. What is shown follows the
// permissions the caller's role grants; what is done is the API's own procedure.
import type { FastifyInstance } from "fastify";
import { notFound } from "../../core/errors";
import { field } from "../../pages/forms";
import { type PageDeps, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { teamPlace } from "../../teams/index";
import { instanceEnvPages } from "./instance-env";
import {
  callerOf,
  instanceOf,
  type InstanceParams,
  instancePath,
  onInstance,
  renderInstance,
} from "./instance-render";
import { instanceSnapshotPages } from "./instance-snapshots";

/** The actions the page offers, each with the notice that follows it. */
const ACTIONS = {
  start: "started",
  stop: "stopped",
  restart: "restarted",
  suspend: "suspended",
} as const;
type PageAction = keyof typeof ACTIONS;

export function instancePages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };

  app.get<{ Params: InstanceParams }>(
    "/teams/:teamId/instances/:instanceId",
    route,
    (request, reply) => renderInstance(deps, request, reply),
  );

  app.post<{ Params: InstanceParams & { action: string } }>(
    "/teams/:teamId/instances/:instanceId/actions/:action",
    route,
    async (request, reply) => {
      const { action } = request.params;
      if (!Object.hasOwn(ACTIONS, action)) throw notFound();
      return onInstance(
        deps,
        request,
        reply,
        { form: "action", done: ACTIONS[action as PageAction] },
        (caller, instance) => caller.instances[action as PageAction]({ instanceId: instance.id }),
      );
    },
  );

  app.post<{ Params: InstanceParams }>(
    "/teams/:teamId/instances/:instanceId/settings",
    route,
    (request, reply) => {
      const name = field(request.body, "name") ?? "";
      return onInstance(
        deps,
        request,
        reply,
        { form: "settings", values: { name }, done: "renamed" },
        (caller, instance) => caller.instances.update({ instanceId: instance.id, name }),
      );
    },
  );

  // Deleting asks first: with the page's script, confirm(); without, a page of its own.
  app.post<{ Params: InstanceParams }>(
    "/teams/:teamId/instances/:instanceId/delete",
    route,
    async (request, reply) => {
      const caller = callerOf(deps, request);
      const { teamId, instanceId } = request.params;
      const instance = await instanceOf(caller, request.params);
      if (field(request.body, "confirmed") !== "yes") {
        const place = await teamPlace(caller.team, teamId);
        return sendPage(deps, request, reply, "snapshots/pages/instance-delete", {
          title: "Delete an instance",
          place,
          instance,
          path: instancePath(request.params),
        });
      }
      await caller.instances.delete({ instanceId });
      return reply.redirect(`/teams/${encodeURIComponent(teamId)}?done=deleted`, 303);
    },
  );

  instanceEnvPages(app, deps, route);
  instanceSnapshotPages(app, deps, route);
}

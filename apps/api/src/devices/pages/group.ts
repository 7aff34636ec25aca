// One device group's page (GET /teams/:teamId/device-groups/:groupId): its members (add devices of
// its application, take them out), its target snapshot (set from the application's snapshots, or
// cleared: the members are told at their next check-in), its variables, its name and description,
// and deleting it (asked first: by the page's script, or on a page of its own without script).
// Everything is the API's own procedures, called as the signed-in user.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from "fastify";
import { notFound } from "../../core/errors";
import { field, fields, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage } from "../../pages/page";
import { teamPlace } from "../../teams/index";
import {
  type ApplicationSnapshots,
  type GroupCaller,
  groupCallerOf,
  groupOfTeam,
  groupsPath,
} from "./group-caller";

type Params = { teamId: string; groupId: string };

const NOTICES: Record<string, string> = {
  created: "The device group is created. Add the application's devices to it below.",
  edited: "The group's name and description are saved.",
  target: "The target snapshot is saved: the members get it at their next check-in.",
  cleared: "The target is cleared: each member runs its own target again.",
  added: "The devices are in the group.",
  removed: "The device is out of the group.",
  env: "The variables are saved: the members get them at their next check-in.",
};

/** The actions the page's forms post, each with the notice that follows it. */
const ACTIONS = ["edit", "target", "add", "remove", "env", "delete"] as const;
type Action = (typeof ACTIONS)[number];

/** Blank rows the variables' form offers for new ones. */
const NEW_ROWS = 3;

interface GroupState {
  /** Which form failed, with its error and what it sent. */
  failed?: { action: Action; error: FormError; sent?: Record<string, unknown> };
}

/** The variables' form as posted: rows `name-N`, `value-N`, `hidden-N`; blank names dropped. */
function envOf(body: unknown) {
  const rows = Number(field(body, "rows") ?? "0");
  const env: { name: string; value: string; hidden?: boolean }[] = [];
  for (let index = 0; index < Math.min(rows, 600); index++) {
    const name = (field(body, `name-${index}`) ?? "").trim();
    if (name === "") continue;
    const hidden = field(body, `hidden-${index}`) === "yes";
    env.push({ name, value: field(body, `value-${index}`) ?? "", ...(hidden && { hidden }) });
  }
  return env;
}

async function doAction(
  caller: GroupCaller,
  ids: { applicationId: string; groupId: string },
  action: Action,
  body: unknown,
): Promise<string> {
  switch (action) {
    case "edit":
      await caller.deviceGroups.update({
        ...ids,
        name: field(body, "name") ?? "",
        description: field(body, "description") ?? "",
      });
      return "edited";
    case "target": {
      const snapshot = field(body, "targetSnapshotId") ?? "";
      await caller.deviceGroups.update({ ...ids, targetSnapshotId: snapshot || null });
      return snapshot ? "target" : "cleared";
    }
    case "add":
      await caller.deviceGroups.membership({ ...ids, add: fields(body, "deviceId") });
      return "added";
    case "remove":
      await caller.deviceGroups.membership({ ...ids, remove: fields(body, "deviceId") });
      return "removed";
    case "env":
      await caller.deviceGroups.updateSettings({ ...ids, env: envOf(body) });
      return "env";
    case "delete":
      await caller.deviceGroups.delete(ids);
      return "deleted";
  }
}

export function groupPage(
  app: FastifyInstance,
  deps: PageDeps,
  route: RouteShorthandOptions,
  snapshotsOf: ApplicationSnapshots,
) {
  const pathOf = ({ teamId, groupId }: Params) =>
    `${groupsPath(teamId)}/${encodeURIComponent(groupId)}`;

  async function renderGroup(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    state: GroupState = {},
  ) {
    const caller = groupCallerOf(deps, request);
    const { teamId, groupId } = request.params;
    const place = await teamPlace(caller.team, teamId);
    const summary = await groupOfTeam(caller, teamId, groupId);
    const applicationId = summary.application.id;
    const group = await caller.deviceGroups.byId({ applicationId, groupId });
    const canUpdate = place.can("application:device-group:update");
    // The rollouts area's pages take the form that starts a rollout (it posts to them).
    const canRollout = place.can("rollout:create");
    const canMembers = place.can("application:device-group:membership:update");
    const snapshots =
      canUpdate || canRollout ? await snapshotsOf(deps.context(request), applicationId) : [];
    const members = new Set(group.devices.map((device) => device.id));
    const candidates = canMembers
      ? (await caller.devices.ofApplication({ applicationId, limit: 100 })).devices.filter(
          (device) => !members.has(device.id),
        )
      : [];
    const failed = state.failed;
    const env =
      failed?.action === "env"
        ? (failed.sent?.env as typeof group.settings.env)
        : group.settings.env;
    return sendPage(
      deps,
      request,
      reply,
      "devices/pages/group",
      {
        title: `${group.name} · ${group.application.name}`,
        place,
        group,
        path: pathOf(request.params),
        snapshots,
        candidates,
        env,
        newRows: NEW_ROWS,
        can: {
          update: canUpdate,
          members: canMembers,
          delete: place.can("application:device-group:delete"),
          rollout: canRollout,
        },
        rolloutsPath: `${pathOf(request.params)}/rollouts`,
        failed,
        edit:
          failed?.action === "edit"
            ? failed.sent
            : { name: group.name, description: group.description },
        notice: failed ? undefined : noticeOf(request, NOTICES),
      },
      failed?.error.status ?? 200,
    );
  }

  app.get<{ Params: Params }>("/teams/:teamId/device-groups/:groupId", route, (request, reply) =>
    renderGroup(request, reply),
  );

  app.post<{ Params: Params & { action: string } }>(
    "/teams/:teamId/device-groups/:groupId/:action",
    route,
    async (request, reply) => {
      const { teamId, groupId, action } = request.params;
      if (!(ACTIONS as readonly string[]).includes(action)) throw notFound();
      const caller = groupCallerOf(deps, request);
      if (action === "delete" && field(request.body, "confirmed") !== "yes") {
        // Without script: asked on a page of its own.
        const place = await teamPlace(caller.team, teamId);
        const group = await groupOfTeam(caller, teamId, groupId);
        return sendPage(deps, request, reply, "devices/pages/group-delete", {
          title: `Delete ${group.name}?`,
          place,
          group,
          path: pathOf(request.params),
        });
      }
      let done: string;
      try {
        const group = await groupOfTeam(caller, teamId, groupId);
        done = await doAction(
          caller,
          { applicationId: group.application.id, groupId },
          action as Action,
          request.body,
        );
      } catch (error) {
        const sent =
          action === "edit"
            ? {
                name: field(request.body, "name") ?? "",
                description: field(request.body, "description") ?? "",
              }
            : action === "env"
              ? { env: envOf(request.body) }
              : undefined;
        return renderGroup(request, reply, {
          failed: { action: action as Action, error: formError(request, reply, error), sent },
        });
      }
      if (done === "deleted") return reply.redirect(`${groupsPath(teamId)}?done=deleted`, 303);
      return reply.redirect(`${pathOf(request.params)}?done=${done}`, 303);
    },
  );
}

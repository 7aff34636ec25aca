// One rollout's page (GET /teams/:teamId/rollouts/:rolloutId): its state and reason, the snapshot,
// the target and the settings, each wave (state, times) with its devices (state, reason, what each
// ran before); and for owners the actions its state allows — pause, resume, approve, abort (asked
// first: by the page's script, or on a page of its own without script). While it is under way the
// page offers a Refresh link. Everything is the API's own procedures, called as the signed-in user.
import type { Rollout } from "@flowplane/contract";
import { ACTIVE_ROLLOUT_STATES } from "@flowplane/db";
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from "fastify";
import { notFound } from "../../core/errors";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage } from "../../pages/page";
import { teamPlace } from "../../teams/index";
import {
  applicationRolloutsPath,
  groupRolloutsPath,
  rolloutCallerOf,
  rolloutOfTeam,
  rolloutPath,
} from "./caller";

type Params = { teamId: string; rolloutId: string };

const NOTICES: Record<string, string> = {
  started: "The rollout is started: its first wave is under way.",
  paused: "The rollout is paused: no device is deployed until it is resumed.",
  resumed: "The rollout goes on where it stopped.",
  approved: "The next wave is approved.",
  aborted: "The rollout is aborted: the devices it deployed run their target from before again.",
};

const ACTIONS = ["pause", "resume", "approve", "abort"] as const;
type Action = (typeof ACTIONS)[number];
const DONE: Record<Action, string> = {
  pause: "paused",
  resume: "resumed",
  approve: "approved",
  abort: "aborted",
};

/** The states in which each action applies (the API says so too, with a 409). */
const APPLIES: Record<Action, readonly string[]> = {
  pause: ["scheduled", "running", "waiting_approval"],
  resume: ["paused"],
  approve: ["waiting_approval"],
  abort: ACTIVE_ROLLOUT_STATES,
};

/** A rollout still under way (its page may change while it is read). */
export const underWay = (state: string) => APPLIES.abort.includes(state);

/** Each state as the pages say it. */
export const STATE_LABELS: Record<string, string> = {
  scheduled: "Scheduled",
  running: "Running",
  paused: "Paused",
  waiting_approval: "Waiting for approval",
  succeeded: "Succeeded",
  failed: "Failed",
  rolled_back: "Rolled back",
  aborted: "Aborted",
  pending: "Pending",
  done: "Done",
  deploying: "Deploying",
  soaking: "Soaking",
  healthy: "Healthy",
  skipped: "Skipped",
};

export function rolloutPage(app: FastifyInstance, deps: PageDeps, route: RouteShorthandOptions) {
  async function renderRollout(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    error?: FormError,
  ) {
    const caller = rolloutCallerOf(deps, request);
    const { teamId, rolloutId } = request.params;
    const place = await teamPlace(caller.team, teamId);
    const rollout: Rollout = await rolloutOfTeam(caller, teamId, rolloutId);
    const canEdit = place.can("rollout:edit");
    const actions = canEdit ? ACTIONS.filter((one) => APPLIES[one].includes(rollout.state)) : [];
    return sendPage(
      deps,
      request,
      reply,
      "rollouts/pages/rollout",
      {
        title: `Rollout of ${rollout.snapshot.name} · ${rollout.application.name}`,
        place,
        rollout,
        path: rolloutPath(teamId, rolloutId),
        // The group's pages are for those who may list groups (members and up).
        groupPath:
          rollout.deviceGroup && place.can("application:device-group:list")
            ? groupRolloutsPath(teamId, rollout.deviceGroup.id)
            : "",
        applicationPath: applicationRolloutsPath(teamId, rollout.application.id),
        labels: STATE_LABELS,
        actions,
        underWay: underWay(rollout.state),
        error,
        notice: error ? undefined : noticeOf(request, NOTICES),
      },
      error?.status ?? 200,
    );
  }

  app.get<{ Params: Params }>("/teams/:teamId/rollouts/:rolloutId", route, (request, reply) =>
    renderRollout(request, reply),
  );

  app.post<{ Params: Params & { action: string } }>(
    "/teams/:teamId/rollouts/:rolloutId/:action",
    route,
    async (request, reply) => {
      const { teamId, rolloutId, action } = request.params;
      if (!(ACTIONS as readonly string[]).includes(action)) throw notFound();
      const caller = rolloutCallerOf(deps, request);
      const path = rolloutPath(teamId, rolloutId);
      try {
        const rollout = await rolloutOfTeam(caller, teamId, rolloutId);
        if (action === "abort" && field(request.body, "confirmed") !== "yes") {
          // Without script: asked on a page of its own.
          const place = await teamPlace(caller.team, teamId);
          return sendPage(deps, request, reply, "rollouts/pages/abort", {
            title: "Abort the rollout?",
            place,
            rollout,
            path,
          });
        }
        await caller.rollouts[action as Action]({ rolloutId });
      } catch (error) {
        return renderRollout(request, reply, formError(request, reply, error));
      }
      return reply.redirect(`${path}?done=${DONE[action as Action]}`, 303);
    },
  );
}

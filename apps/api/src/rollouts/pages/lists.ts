// The rollout lists and starting one. A device group's rollouts
// (GET /teams/:teamId/device-groups/:groupId/rollouts), newest first, paged, with the owners' form
// "Roll out a snapshot" (the group's page has it too, posting here): Plan shows what each wave
// would deploy (a dry run) with a Start button posting the same values; Start starts it and leads
// to its page. An application's rollouts (GET /teams/:teamId/applications/:applicationId/rollouts).
// Everything is the API's own procedures, called as the signed-in user.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { field, type FormError, formError } from "../../pages/forms";
import { type PageDeps, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { type PageAt, pageAt, pageLinks } from "../../pages/paging";
import { teamPlace } from "../../teams/index";
import {
  applicationOfTeam,
  applicationRolloutsPath,
  createInputOf,
  groupOfTeam,
  groupRolloutsPath,
  type RolloutCaller,
  rolloutCallerOf,
  type RolloutForm,
  rolloutFormOf,
  rolloutPath,
} from "./caller";
import { rolloutPage, STATE_LABELS } from "./rollout";

type GroupParams = { teamId: string; groupId: string };
type ApplicationParams = { teamId: string; applicationId: string };

const PAGE_SIZE = 20;

/** A page of rollouts as rollout-rows.eta shows it, with its pager. */
function listOf(
  page: { rollouts: unknown[]; meta: { next_cursor?: string } },
  teamId: string,
  path: string,
  at: PageAt,
  caption: string,
) {
  const links = pageLinks(path, {}, at, page.meta.next_cursor);
  return {
    rollouts: page.rollouts,
    labels: STATE_LABELS,
    teamId,
    caption,
    pager: { label: "Rollouts pages", ...links },
  };
}

/** The application's snapshots, newest first, as a rollout may roll out. */
async function snapshotsOf(caller: RolloutCaller, applicationId: string) {
  const page = await caller.snapshots.ofApplication({ applicationId, limit: 100 });
  return page.snapshots.map((one) => ({ id: one.id, name: one.name, createdAt: one.createdAt }));
}

export function rolloutPages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };

  async function renderGroupRollouts(
    request: FastifyRequest<{ Params: GroupParams }>,
    reply: FastifyReply,
    failed?: { error: FormError; sent: RolloutForm },
  ) {
    const caller = rolloutCallerOf(deps, request);
    const { teamId, groupId } = request.params;
    const place = await teamPlace(caller.team, teamId);
    const group = await groupOfTeam(caller, teamId, groupId);
    const path = groupRolloutsPath(teamId, groupId);
    const at = pageAt(request.query);
    const page = await caller.rollouts.ofGroup({
      applicationId: group.application.id,
      groupId,
      limit: PAGE_SIZE,
      cursor: at.cursor,
    });
    const canCreate = place.can("rollout:create");
    return sendPage(
      deps,
      request,
      reply,
      "rollouts/pages/group-rollouts",
      {
        title: `Rollouts of ${group.name} · ${group.application.name}`,
        place,
        group,
        groupPath: `/teams/${encodeURIComponent(teamId)}/device-groups/${encodeURIComponent(groupId)}`,
        applicationPath: applicationRolloutsPath(teamId, group.application.id),
        list: listOf(page, teamId, path, at, `Rollouts of ${group.name}`),
        rollout: canCreate
          ? {
              action: path,
              snapshots: await snapshotsOf(caller, group.application.id),
              sent: failed?.sent,
              error: failed?.error,
            }
          : undefined,
      },
      failed?.error.status ?? 200,
    );
  }

  app.get<{ Params: GroupParams }>(
    "/teams/:teamId/device-groups/:groupId/rollouts",
    route,
    (request, reply) => renderGroupRollouts(request, reply),
  );

  // Plan (a dry run: the plan's page) or Start (the rollout's page), from this page's form or the
  // group's page's.
  app.post<{ Params: GroupParams }>(
    "/teams/:teamId/device-groups/:groupId/rollouts",
    route,
    async (request, reply) => {
      const { teamId, groupId } = request.params;
      const caller = rolloutCallerOf(deps, request);
      const sent = rolloutFormOf(request.body);
      const dryRun = field(request.body, "intent") === "plan";
      try {
        const group = await groupOfTeam(caller, teamId, groupId);
        const answer = await caller.rollouts.create(createInputOf(sent, groupId, dryRun));
        if ("dryRun" in answer) {
          const place = await teamPlace(caller.team, teamId);
          return sendPage(deps, request, reply, "rollouts/pages/plan", {
            title: `Plan: ${answer.snapshot.name} to ${group.name}`,
            place,
            group,
            plan: answer,
            sent,
            action: groupRolloutsPath(teamId, groupId),
          });
        }
        return reply.redirect(`${rolloutPath(teamId, answer.id)}?done=started`, 303);
      } catch (error) {
        return renderGroupRollouts(request, reply, {
          error: formError(request, reply, error),
          sent,
        });
      }
    },
  );

  app.get<{ Params: ApplicationParams }>(
    "/teams/:teamId/applications/:applicationId/rollouts",
    route,
    async (request, reply) => {
      const caller = rolloutCallerOf(deps, request);
      const { teamId, applicationId } = request.params;
      const place = await teamPlace(caller.team, teamId);
      const application = await applicationOfTeam(caller, teamId, applicationId);
      const at = pageAt(request.query);
      const page = await caller.rollouts.ofApplication({
        applicationId,
        limit: PAGE_SIZE,
        cursor: at.cursor,
      });
      const path = applicationRolloutsPath(teamId, applicationId);
      return sendPage(deps, request, reply, "rollouts/pages/application-rollouts", {
        title: `Rollouts of ${application.name}`,
        place,
        application,
        list: listOf(page, teamId, path, at, `Rollouts of ${application.name}`),
      });
    },
  );

  rolloutPage(app, deps, route);
}

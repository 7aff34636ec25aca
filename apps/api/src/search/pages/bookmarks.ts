// FlowFuse's own page paths, as its users bookmarked them, lead to the matching Flowplane page:
// `/team/<slug>/…`, `/application/<id>/…`, `/instance/<id>/…`, `/device/<id>/…` and the
// administrator's `/admin/<page>/<tab>`. The thing named is looked up through the API's own
// procedures as the signed-in person, so a team, instance or device they may not see is the same
// 404 page as one that does not exist, and a person not signed in signs in first and comes back.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { router } from "../../core/trpc";
import { applicationsRouter } from "../../applications/index";
import { deviceProcedures } from "../../devices/index";
import { instancesRouter } from "../../instances/index";
import type { PageDeps } from "../../pages/page";
import { signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { teamRouter } from "../../teams/index";

// The same procedures under the same names as the API's router (rate limits count by them).
const lookups = router({
  team: teamRouter,
  applications: applicationsRouter,
  instances: instancesRouter,
  devices: router(deviceProcedures),
});

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  lookups.createCaller(deps.context(request));

/** A FlowFuse team page's first segment → the Flowplane team page's tail. */
const TEAM_TABS: Record<string, string> = {
  overview: "",
  applications: "",
  instances: "",
  devices: "/devices",
  "device-groups": "/device-groups",
  pipelines: "/pipelines",
  library: "/library",
  "shared-library": "/library",
  broker: "/broker",
  brokers: "/broker",
  "audit-log": "/audit-log",
  members: "/members",
  settings: "/settings",
};

/** FlowFuse's administrator pages → Flowplane's. */
const ADMIN_PAGES: Record<string, string> = {
  overview: "/admin",
  users: "/admin/users",
  teams: "/admin/teams",
  "team-types": "/admin/team-types",
  "instance-types": "/admin/instance-types",
  stacks: "/admin/stacks",
  templates: "/admin/templates",
  settings: "/admin/settings",
  "audit-log": "/admin/audit-log",
};

type Rest = { "*"?: string };
const first = (rest: Rest) => (rest["*"] ?? "").split("/")[0] ?? "";
const teamPath = (teamId: string) => `/teams/${encodeURIComponent(teamId)}`;

export function bookmarkPages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };

  for (const path of ["/team/:slug", "/team/:slug/*"]) {
    app.get<{ Params: { slug: string } & Rest }>(path, route, async (request, reply) => {
      const team = await callerOf(deps, request).team.bySlug({ slug: request.params.slug });
      const tail = TEAM_TABS[first(request.params)] ?? "";
      return reply.redirect(`${teamPath(team.id)}${tail}`, 302);
    });
  }

  for (const path of ["/application/:applicationId", "/application/:applicationId/*"]) {
    app.get<{ Params: { applicationId: string } & Rest }>(path, route, async (request, reply) => {
      const { applicationId } = request.params;
      const application = await callerOf(deps, request).applications.get({ applicationId });
      return reply.redirect(`${teamPath(application.team.id)}#application-${application.id}`, 302);
    });
  }

  for (const path of ["/instance/:instanceId", "/instance/:instanceId/*"]) {
    app.get<{ Params: { instanceId: string } & Rest }>(path, route, async (request, reply) => {
      const { instanceId } = request.params;
      const instance = await callerOf(deps, request).instances.get({ instanceId });
      const page = `${teamPath(instance.team.id)}/instances/${encodeURIComponent(instance.id)}`;
      return reply.redirect(page, 302);
    });
  }

  for (const path of ["/device/:deviceId", "/device/:deviceId/*"]) {
    app.get<{ Params: { deviceId: string } & Rest }>(path, route, async (request, reply) => {
      const { deviceId } = request.params;
      const device = await callerOf(deps, request).devices.byId({ deviceId });
      const page = `${teamPath(device.team.id)}/devices/${encodeURIComponent(device.id)}`;
      return reply.redirect(page, 302);
    });
  }

  // `/admin/users/general`, `/admin/settings/general`…: FlowFuse's tabs under each page.
  app.get<{ Params: { page: string } & Rest }>("/admin/:page/*", route, async (request, reply) => {
    const target = ADMIN_PAGES[request.params.page];
    if (target === undefined) return reply.callNotFound();
    return reply.redirect(target, 302);
  });
  app.get("/admin/overview", route, async (_request, reply) => reply.redirect("/admin", 302));
}

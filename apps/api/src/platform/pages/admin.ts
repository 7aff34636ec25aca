// The administrators' pages (FlowFuse's /admin): the overview with the platform's figures, every
// team, the platform's settings and its audit log here; the users (users.ts) and the catalogue
// (catalogue.ts) beside. Every page calls the API's own procedures, so a person who is not an
// administrator gets the API's refusal (403) as a page.
import type { AuditLog } from "@flowplane/contract";
import type { FastifyInstance } from "fastify";
import { field, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage } from "../../pages/page";
import { cataloguePages } from "./catalogue";
import { adminRoute, queryOf, sendRefusal } from "./shared";
import { userPages } from "./users";

const TEAMS_PAGE = 50;
const LOG_PAGE = 50;

export function adminPages(app: FastifyInstance, deps: PageDeps) {
  adminRoute(app, deps, "GET", "/admin", async (request, reply, caller) => {
    let stats;
    try {
      stats = await caller.admin.stats();
    } catch (error) {
      return sendRefusal(deps, request, reply, error);
    }
    return sendPage(deps, request, reply, "platform/pages/overview", {
      title: "Administration",
      tab: "overview",
      stats,
    });
  });

  adminRoute(app, deps, "GET", "/admin/teams", async (request, reply, caller) => {
    const cursor = queryOf(request, "cursor");
    let list;
    try {
      list = await caller.team.all({ cursor, limit: TEAMS_PAGE });
    } catch (error) {
      return sendRefusal(deps, request, reply, error);
    }
    const next = list.meta.next_cursor;
    return sendPage(deps, request, reply, "platform/pages/teams", {
      title: "Teams · Administration",
      tab: "teams",
      teams: list.teams,
      count: list.count,
      nextHref: next ? `/admin/teams?${new URLSearchParams({ cursor: next })}` : undefined,
    });
  });

  adminRoute(app, deps, "GET", "/admin/settings", async (request, reply, caller) => {
    let settings;
    try {
      settings = await caller.settings.get();
    } catch (error) {
      return sendRefusal(deps, request, reply, error);
    }
    return sendPage(deps, request, reply, "platform/pages/settings", {
      title: "Settings · Administration",
      tab: "settings",
      settings,
      notice: noticeOf(request, { saved: "The settings are saved." }),
    });
  });

  adminRoute(app, deps, "POST", "/admin/settings", async (request, reply, caller) => {
    try {
      await caller.settings.update({ "team:create": field(request.body, "teamCreate") === "on" });
    } catch (error) {
      // A refusal, or the API's own error: the page of it, with its status.
      const failed = formError(request, reply, error);
      if (failed.status === 403 || failed.status === 404) {
        return sendRefusal(deps, request, reply, error);
      }
      const settings = await caller.settings.get();
      return sendPage(
        deps,
        request,
        reply,
        "platform/pages/settings",
        { title: "Settings · Administration", tab: "settings", settings, error: failed },
        failed.status,
      );
    }
    return reply.redirect("/admin/settings?done=saved", 303);
  });

  adminRoute(app, deps, "GET", "/admin/audit-log", async (request, reply, caller) => {
    const event = queryOf(request, "event");
    const cursor = queryOf(request, "cursor");
    let log: AuditLog | undefined;
    let error;
    try {
      log = await caller.auditLog.platform({ event, cursor, limit: LOG_PAGE });
    } catch (failure) {
      error = formError(request, reply, failure);
      if (error.status === 403 || error.status === 404) {
        return sendRefusal(deps, request, reply, failure);
      }
    }
    const next = log?.meta.next_cursor;
    return sendPage(
      deps,
      request,
      reply,
      "platform/pages/audit-log",
      {
        title: "Audit log · Administration",
        tab: "audit-log",
        event: event ?? "",
        log: log?.log ?? [],
        count: log?.count,
        error,
        nextHref: next
          ? `/admin/audit-log?${new URLSearchParams({ ...(event && { event }), cursor: next })}`
          : undefined,
        bodyOf: (body: unknown) =>
          body === null || body === undefined ? "" : JSON.stringify(body),
      },
      error?.status ?? 200,
    );
  });

  userPages(app, deps);
  cataloguePages(app, deps);
}

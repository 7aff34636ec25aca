// A team's audit log (GET /teams/:teamId/audit-log, owners): its entries newest first, narrowed by
// event, user, resource type and text as the API narrows them, a page at a time over the API's
// cursor; and the same entries as CSV (GET /teams/:teamId/audit-log.csv, the same filters, every
// page up to a cap). Both read the API's `auditLog.team`, called as the signed-in user.
import { AUDIT_LOG_SCOPES, MAX_PAGE_SIZE } from "@flowplane/contract";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { router } from "../../core/trpc";
import { type FormError, formError } from "../../pages/forms";
import { type PageDeps, sendFailure, sendPage, signedIn } from "../../pages/page";
import { pageAt, pageLinks } from "../../pages/paging";
import { pageRoute } from "../../pages/render";
import { teamPlace, teamRouter } from "../../teams/index";
import { auditLogRouter } from "../procedures";
import { entriesCsv, type EntryRow, entryRow } from "./entries";

// The same procedures under the same names as the API's router (rate limits count by them).
const auditLogProcedures = router({ team: teamRouter, auditLog: auditLogRouter });

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  auditLogProcedures.createCaller(deps.context(request));

/** Entries a page shows. */
const PAGE_SIZE = 50;

/** The most entries one CSV download holds (the API's largest pages, this many of them). */
const CSV_PAGES = 10;

type Params = { teamId: string };

/** The filters as the page's query gives them (empty ones left out). */
function filtersOf(query: unknown) {
  const read = (name: string) => {
    const value = (query as Record<string, unknown> | undefined)?.[name];
    return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
  };
  return {
    event: read("event"),
    username: read("username"),
    scope: read("scope"),
    query: read("query"),
  };
}
type Filters = ReturnType<typeof filtersOf>;

export function auditLogPages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };

  /** One page of the log, as the API reads it (its input checks the filters). */
  const read = (
    request: FastifyRequest<{ Params: Params }>,
    filters: Filters,
    cursor: string | undefined,
    limit: number,
  ) =>
    callerOf(deps, request).auditLog.team({
      teamId: request.params.teamId,
      ...filters,
      scope: filters.scope as (typeof AUDIT_LOG_SCOPES)[number] | undefined,
      cursor,
      limit,
    });

  app.get<{ Params: Params }>("/teams/:teamId/audit-log", route, async (request, reply) => {
    const { teamId } = request.params;
    const place = await teamPlace(callerOf(deps, request).team, teamId);
    const filters = filtersOf(request.query);
    const at = pageAt(request.query);
    let rows: EntryRow[] = [];
    let next: string | undefined;
    let error: FormError | undefined;
    try {
      const page = await read(request, filters, at.cursor, PAGE_SIZE);
      rows = page.log.map(entryRow);
      next = page.meta.next_cursor;
    } catch (failure) {
      error = formError(request, reply, failure);
    }
    const path = `/teams/${encodeURIComponent(teamId)}/audit-log`;
    const csv = new URLSearchParams(
      Object.entries(filters).filter((pair): pair is [string, string] => pair[1] !== undefined),
    ).toString();
    return sendPage(
      deps,
      request,
      reply,
      "audit-log/pages/audit-log",
      {
        title: `Audit log · ${place.team.name}`,
        place,
        filters,
        scopes: AUDIT_LOG_SCOPES,
        rows,
        error,
        csv: `${path}.csv${csv ? `?${csv}` : ""}`,
        pager: { label: "Audit log pages", ...pageLinks(path, filters, at, next) },
      },
      error?.status ?? 200,
    );
  });

  app.get<{ Params: Params }>("/teams/:teamId/audit-log.csv", route, async (request, reply) => {
    const filters = filtersOf(request.query);
    const rows: EntryRow[] = [];
    try {
      let cursor: string | undefined;
      for (let i = 0; i < CSV_PAGES; i++) {
        const page = await read(request, filters, cursor, MAX_PAGE_SIZE);
        rows.push(...page.log.map(entryRow));
        cursor = page.meta.next_cursor;
        if (cursor === undefined) break;
      }
    } catch (error) {
      return sendFailure(deps, request, reply, error, "No audit log to download", {
        href: `/teams/${encodeURIComponent(request.params.teamId)}/audit-log`,
        label: "Back to the audit log",
      });
    }
    return reply
      .header("content-type", "text/csv; charset=utf-8")
      .header(
        "content-disposition",
        `attachment; filename="audit-log-${request.params.teamId}.csv"`,
      )
      .header("cache-control", "no-store")
      .send(entriesCsv(rows));
  });
}

// A team's events (GET /teams/{teamId}/events, docs/events.md): Server-Sent Events to a reader that
// asks for `text/event-stream`, a page of JSON to anyone else, on the same path. It is a route
// outside tRPC (a procedure answers once), under /api, where the people's hook has authenticated
// the caller before it runs. Both read the database after a cursor, in the events' public order:
// a stream woken by the hub (events/hub.ts) reads what follows the last event it sent, so a
// reconnect with `Last-Event-ID` — to this process or another — misses nothing and repeats nothing.
import { EventList, EventsQuery, eventTypesOf, Id, type TeamEvent } from "@flowplane/contract";
import {
  type Db,
  type EventRecord,
  latestEventSeq,
  listEvents,
  prunedThrough,
} from "@flowplane/db";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ServerResponse } from "node:http";
import { z } from "zod";
import { sessionCookieOf } from "../core/credentials/sessions";
import { isDatabaseUnavailable, validationError } from "../core/errors";
import { type RouteDoc, routeUrl } from "../core/route-docs";
import { underApi } from "../core/rest";
import type { Platform } from "../plugins/area";
import { EventHub } from "./hub";
import { eventsExpired, visibleKinds } from "./visibility";

export interface EventStreamOptions {
  /** A comment line to keep proxies from closing the stream (default 15 s). */
  heartbeatMs?: number;
  /** The caller's credential and role checked again (default 10 s). */
  recheckMs?: number;
  /** How often the newest id is looked at for other processes' events (default 1 s). */
  pollMs?: number;
  /** A reader that stopped reading is let go past this much unsent (default 1 MiB). */
  maxUnsentBytes?: number;
}

/** How many events one read of the database takes while a stream catches up. */
const BATCH = 500;

const TAG = "Events";

const Params = z.object({ teamId: Id.describe("The team's id") });

export const EVENTS_DOC: RouteDoc = {
  id: "events-list",
  method: "GET",
  path: "/api/v1/teams/{teamId}/events",
  tags: [TAG],
  summary: "The team's events: a live stream, or a page of JSON (viewers and up)",
  description:
    "A team's events in their order (docs/events.md), each as the `TypedEvent` schema shows it (one schema per type). With `Accept: text/event-stream`: Server-Sent Events, each with `id:` the event's id, `event:` its type and `data:` the event as JSON; without `Last-Event-ID` it starts with the next new event, with it after that event (nothing missed, nothing repeated, across restarts); a comment (`: heartbeat`) comes every 15 s; the stream ends when the caller's token or session is revoked or their role changes so that they may no longer read (checked every 10 s), when the reader falls too far behind (reconnect with `Last-Event-ID`), and when the server closes. Otherwise JSON: a page of events oldest first, from the oldest kept or after `cursor`; `meta.next_cursor` is there when more events follow now (to look for newer ones later, pass the last event's id as `cursor`). Filters: `type` (comma-separated or repeated), `resourceType` and `resourceId`. A caller sees an event only if they may read the audit log of what it is about: a team's or an application's events are the owners', an instance's or a device's the viewers'. A cursor or `Last-Event-ID` behind the retention window (7 days) is answered 410 `events_expired` before anything is sent.",
  security: "bearerAuth",
  permission: "team:events",
  rateLimit: "global",
  params: Params,
  query: EventsQuery,
  responses: {
    200: {
      description: "The events: JSON, or Server-Sent Events for `Accept: text/event-stream`",
      schema: EventList,
      contentType: "text/event-stream",
    },
    400: { description: "A bad parameter (`invalid_request`)" },
    401: { description: "Missing, malformed, unknown, expired or revoked token (`unauthorized`)" },
    403: { description: "A token that may not read the team (`forbidden`)" },
    404: { description: "No such team among the caller's (`not_found`)" },
    410: { description: "The cursor is behind the retention window (`events_expired`)" },
    500: { description: "Unexpected error (`unexpected_error`)" },
  },
};

/** An event as the API shows it. */
export function eventView(row: EventRecord): TeamEvent {
  return {
    id: row.seq,
    type: row.type,
    teamId: row.teamId ?? "",
    createdAt: row.createdAt.toISOString(),
    resource: { type: row.entityType, id: row.entityId },
    actor: row.actorId ? { id: row.actorId } : null,
    data: row.data,
  };
}

/** One SSE event. */
const sseOf = (event: TeamEvent) =>
  `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

const wantsStream = (request: FastifyRequest) =>
  (request.headers.accept ?? "").includes("text/event-stream");

/** A cursor as a number; throws 410 when events after it are gone. */
async function checkedCursor(db: Db, cursor: string | undefined): Promise<bigint | undefined> {
  if (cursor === undefined) return undefined;
  const after = BigInt(cursor);
  if (after < (await prunedThrough(db))) throw eventsExpired();
  return after;
}

export async function eventStreamRoute(
  app: FastifyInstance,
  platform: Platform,
  options: EventStreamOptions = {},
) {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const recheckMs = options.recheckMs ?? 10_000;
  const maxUnsent = options.maxUnsentBytes ?? 1024 * 1024;
  const { db } = platform;
  const hub = new EventHub(db, app.log, platform.services.events, options.pollMs ?? 1000);
  const open = new Set<() => void>();
  app.addHook("preClose", async () => {
    for (const end of [...open]) end();
    hub.close();
  });

  /**
   * The kinds the caller may still read, or undefined once they may read nothing. The database
   * unavailable is thrown: that is no answer either way.
   */
  const stillVisible = async (request: FastifyRequest, teamId: string) => {
    const authenticated = await platform.authenticator.authenticate(request.headers.authorization, {
      sessionCookie:
        request.headers.authorization === undefined ? sessionCookieOf(app, request) : undefined,
      reading: false,
    });
    if (!authenticated) return undefined;
    return visibleKinds(db, authenticated.identity, teamId).catch((error: unknown) => {
      if (isDatabaseUnavailable(error)) throw error;
      return undefined;
    });
  };

  app.get<{ Params: { teamId: string } }>(
    underApi(routeUrl(EVENTS_DOC)),
    async (request, reply) => {
      const params = Params.safeParse(request.params);
      if (!params.success) throw validationError(params.error);
      const { teamId } = params.data;
      let kinds = await visibleKinds(db, platform.contextOf(request).auth, teamId);
      const query = EventsQuery.safeParse(request.query);
      if (!query.success) throw validationError(query.error);
      const filter = {
        teamId,
        types: eventTypesOf(query.data.type),
        entityType: query.data.resourceType,
        entityId: query.data.resourceId,
      };

      if (!wantsStream(request)) {
        const after = await checkedCursor(db, query.data.cursor);
        const limit = query.data.limit;
        const rows = await listEvents(db, {
          ...filter,
          after,
          entityTypes: kinds,
          limit: limit + 1,
        });
        const page = rows.slice(0, limit);
        const body: EventList = {
          meta: rows.length > limit ? { next_cursor: page[page.length - 1]!.seq } : {},
          events: page.map(eventView) as EventList["events"],
        };
        return reply.send(body);
      }

      const lastEventId = request.headers["last-event-id"];
      const resumeAt = typeof lastEventId === "string" ? lastEventId.trim() : undefined;
      if (resumeAt !== undefined && !/^[0-9]{1,19}$/.test(resumeAt)) {
        throw validationError(
          new z.ZodError([
            {
              code: "custom",
              path: ["Last-Event-ID"],
              message: "Not an event id",
              input: resumeAt,
            },
          ]),
        );
      }
      let cursor = (await checkedCursor(db, resumeAt)) ?? (await latestEventSeq(db));

      reply.hijack();
      const response: ServerResponse = reply.raw;
      response.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      });
      // Tells the reader the stream is open (and, to a reconnecting one, to retry after 1 s).
      response.write("retry: 1000\n: open\n\n");

      let ended = false;
      const timers: NodeJS.Timeout[] = [];
      const end = () => {
        if (ended) return;
        ended = true;
        open.delete(end);
        unsubscribe();
        for (const timer of timers) clearInterval(timer);
        response.end();
      };

      // One read at a time; a wake during a read reads again after it. A read that failed because
      // the database is unavailable is tried again at the next recheck: the stream stays open.
      let reading = false;
      let again = false;
      let failed = false;
      const pump = async () => {
        if (reading) {
          again = true;
          return;
        }
        reading = true;
        try {
          do {
            again = false;
            for (;;) {
              if (ended) return;
              const rows = await listEvents(db, {
                ...filter,
                after: cursor,
                entityTypes: kinds,
                limit: BATCH,
              });
              for (const row of rows) response.write(sseOf(eventView(row)));
              if (rows.length > 0) cursor = BigInt(rows[rows.length - 1]!.seq);
              // A reader that stops reading is let go, not buffered for without end.
              if (response.writableLength > maxUnsent) return end();
              if (rows.length < BATCH) break;
            }
          } while (again);
        } catch (error) {
          if (isDatabaseUnavailable(error)) {
            failed = true;
            return;
          }
          request.log.error({ err: error }, "reading events for a stream failed");
          end();
        } finally {
          reading = false;
        }
      };
      const wake = () => void pump();
      const unsubscribe = hub.subscribe(wake);
      open.add(end);
      response.on("close", end);
      wake();

      timers.push(
        setInterval(() => response.write(": heartbeat\n\n"), heartbeatMs),
        setInterval(() => {
          stillVisible(request, teamId).then(
            (visible) => {
              if (!visible) return end();
              kinds = visible;
              if (failed) {
                failed = false;
                wake();
              }
            },
            // Access is not known while the database is unavailable: the stream stays open
            // (heartbeats go on) and access is checked again at the next recheck.
            (error: unknown) => {
              if (!isDatabaseUnavailable(error)) end();
            },
          );
        }, recheckMs),
      );
    },
  );
}

declare module "../plugins/area" {
  interface AppOptions {
    /** The events stream's timings and bound (tests shorten them). */
    eventStream?: EventStreamOptions;
  }
}

// A device's Node-RED log followed live (GET /devices/{id}/logs/stream): Server-Sent Events, one
// event per line with the line's number as its `id`, so that a client reconnecting with
// `Last-Event-ID` resumes after the last line it saw. It is a route outside tRPC (a procedure
// answers once), under /api, where the people's hook has authenticated the caller before it runs;
// the permission is the JSON read's own (`device:read`, checked by calling `byId` as the caller).
// The stream ends when the device's session ends, when the caller's token or session no longer
// holds (checked again every `recheckMs`) or their role no longer reaches the device, and when the
// server closes. A device offline at the start is waited for.
import { z } from "zod";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ServerResponse } from "node:http";
import { sessionCookieOf } from "../core/credentials/sessions";
import { type RouteDoc, routeUrl } from "../core/route-docs";
import { underApi } from "../core/rest";
import { router } from "../core/trpc";
import type { Platform } from "../plugins/area";
import { channelOf } from "./actions";
import type { DeviceLogLine } from "./log-buffer";
import { deviceProcedures, TAG } from "./procedures";

/** The stream's timings: a comment line to keep proxies from closing it, the caller checked again. */

/** How much a stream may hold unsent for a reader that stopped reading. */
const MAX_UNSENT_BYTES = 1024 * 1024;
export interface DeviceLogStreamOptions {
  heartbeatMs?: number;
  recheckMs?: number;
}

/** Without Last-Event-ID, a new follower first gets this many of the newest lines kept. */
export const STREAM_BACKLOG = 100;

export const DEVICE_LOG_STREAM_DOC: RouteDoc = {
  id: "devices-logStream",
  method: "GET",
  path: "/api/v1/devices/{deviceId}/logs/stream",
  tags: [TAG],
  summary: "Follow a device's Node-RED log live (viewers and up)",
  description:
    "Server-Sent Events (`text/event-stream`): each log line is an event whose `data` is the line as `GET /api/v1/devices/{deviceId}/logs` shows it (`{id, ts, level, msg}`) and whose `id` is the line's `id`; first the newest lines kept (100), or with `Last-Event-ID` those after that line, then each line as the agent sends it. A comment line (`: heartbeat`) comes every 15 s. It ends when the device's MQTT session ends (an `event: end`), when the caller's token or session is revoked or their role no longer reaches the device (checked every 10 s), and when the server closes. A device offline at the start is waited for. Errors before the stream starts are the API's JSON: 400 `no_device_comms` when the platform has no broker.",
  security: "bearerAuth",
  permission: "device:read",
  rateLimit: "global",
  params: z.object({ deviceId: z.string().describe("The device's id") }),
  responses: {
    200: { description: "The log as Server-Sent Events", contentType: "text/event-stream" },
    400: { description: "The platform has no broker (`no_device_comms`), or a bad id" },
    401: { description: "Missing, malformed, unknown, expired or revoked token (`unauthorized`)" },
    403: { description: "A read-only or restricted token that may not read it (`forbidden`)" },
    404: { description: "No such device in the caller's teams (`not_found`)" },
    500: { description: "Unexpected error (`unexpected_error`)" },
  },
};

const byIdOnly = router({ byId: deviceProcedures.byId });

/** One SSE event for a line. */
const eventOf = (line: DeviceLogLine) => `id: ${line.id}\ndata: ${JSON.stringify(line)}\n\n`;

export async function deviceLogStreamRoute(
  app: FastifyInstance,
  platform: Platform,
  options: DeviceLogStreamOptions = {},
) {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const recheckMs = options.recheckMs ?? 10_000;
  const open = new Set<() => void>();
  app.addHook("preClose", async () => {
    for (const end of [...open]) end();
  });

  /** Whether the caller still holds their credential and may still read the device. */
  const stillAllowed = async (request: FastifyRequest, deviceId: string) => {
    const authenticated = await platform.authenticator.authenticate(request.headers.authorization, {
      sessionCookie:
        request.headers.authorization === undefined ? sessionCookieOf(app, request) : undefined,
      reading: false,
    });
    if (!authenticated) return false;
    request.auth = authenticated.identity;
    request.preloadedTeam = undefined;
    try {
      await byIdOnly.createCaller(platform.contextOf(request)).byId({ deviceId });
      return true;
    } catch {
      return false;
    }
  };

  app.get<{ Params: { deviceId: string } }>(
    underApi(routeUrl(DEVICE_LOG_STREAM_DOC)),
    async (request, reply) => {
      const ctx = platform.contextOf(request);
      // The permission first (404 for a device of another team, whatever the platform has).
      const device = await byIdOnly.createCaller(ctx).byId({ deviceId: request.params.deviceId });
      const channel = channelOf(ctx);
      const teamId = device.team.id;
      const lastSeen = Number(request.headers["last-event-id"]);
      let sent = Number.isSafeInteger(lastSeen) && lastSeen > 0 ? lastSeen : 0;
      let backlogDone = false;
      const early: DeviceLogLine[] = [];

      reply.hijack();
      const response: ServerResponse = reply.raw;
      response.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      });
      // A reader that stops reading is let go, not buffered for without end: past this much
      // unsent, the stream ends (its Last-Event-ID resumes it).
      const write = (lines: DeviceLogLine[]) => {
        for (const line of lines) {
          if (line.id <= sent) continue;
          sent = line.id;
          response.write(eventOf(line));
        }
        if (response.writableLength > MAX_UNSENT_BYTES) end();
      };

      let ended = false;
      // Set once the log is watched: an end before that has nothing to stop yet.
      const watching: { stop?: () => void } = {};
      const timers: NodeJS.Timeout[] = [];
      const end = (event?: string) => {
        if (ended) return;
        ended = true;
        open.delete(end);
        for (const timer of timers) clearInterval(timer);
        watching.stop?.();
        if (event && !response.destroyed) response.write(`event: ${event}\ndata: {}\n\n`);
        response.end();
      };
      open.add(end);
      response.on("close", () => end());

      watching.stop = await channel.logs.watch(
        teamId,
        device.id,
        (lines) => {
          if (backlogDone) write(lines);
          else for (const line of lines) early.push(line);
        },
        () => end("end"),
      );
      if (ended) return watching.stop();
      // Lines that arrived while the kept ones were read come after them, each once.
      const { lines } = await channel.logs.read(teamId, device.id, sent || undefined, 1000);
      write(sent ? lines : lines.slice(-STREAM_BACKLOG));
      backlogDone = true;
      write(early);
      if (ended) return;

      timers.push(
        setInterval(() => response.write(": heartbeat\n\n"), heartbeatMs),
        setInterval(() => {
          stillAllowed(request, device.id).then(
            (allowed) => allowed || end(),
            () => end(),
          );
        }, recheckMs),
      );
    },
  );
}

declare module "../plugins/area" {
  interface AppOptions {
    /** The live log stream's timings (tests shorten them). */
    deviceLogStream?: DeviceLogStreamOptions;
  }
}

// The metrics area: GET /metrics in Prometheus' text format (prom-client), off unless
// METRICS_TOKEN is set (then the route does not exist: an unknown path's answer), and then only
// for `Authorization: Bearer <METRICS_TOKEN>`. Each app has its own registry (tests build several
// apps in one process). Not rate limited, not in the OpenAPI document, not counted in the request
// series. What is measured: requests.ts and collectors.ts; docs/operations.md lists the series.
import type { FastifyRequest } from "fastify";
import { createHash, timingSafeEqual } from "node:crypto";
import { Registry } from "prom-client";
import { unauthorized } from "../core/errors";
import type { Area } from "../plugins/area";
import { registerCollectors } from "./collectors";
import { recordRequests } from "./requests";

const METRICS_PATH = "/metrics";

declare module "../plugins/area" {
  interface AppOptions {
    /** The scrapers' bearer token (METRICS_TOKEN, at least 32 characters); none: no /metrics. */
    metricsToken?: string;
    /** How long the database's counts are reused between scrapes (default 5 s). */
    metricsCountsTtlMs?: number;
  }
}

declare module "../core/trpc" {
  interface Context {
    /** The app's metrics registry (only with a METRICS_TOKEN). */
    metrics?: Registry;
  }
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/** Whether the request carries the token: compared in constant time (digests of equal length). */
function authorizedBy(expected: Buffer) {
  return (request: FastifyRequest) =>
    timingSafeEqual(digest(request.headers.authorization ?? ""), expected);
}

export const metrics = {
  procedures: {},
  async start(app, platform) {
    if (!platform.options.metricsToken) return;
    const registry = new Registry();
    // First of the hooks the routes get: every area's routes are registered after the starts.
    recordRequests(app, registry, METRICS_PATH);
    registerCollectors(registry, app, platform);
    return { metrics: registry };
  },
  async machines(app, { options, services }) {
    const registry = services.metrics;
    if (!options.metricsToken || !registry) return;
    const authorized = authorizedBy(digest(`Bearer ${options.metricsToken}`));
    app.get(METRICS_PATH, { config: { rateLimit: false } }, async (request, reply) => {
      if (!authorized(request)) throw unauthorized();
      const text = await registry.metrics();
      return reply.header("cache-control", "no-store").type(registry.contentType).send(text);
    });
  },
} satisfies Area;

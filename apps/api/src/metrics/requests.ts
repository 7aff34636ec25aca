// Each request counted as it completes: by method, route (the route's template, never the URL)
// and status, and its latency in a histogram by method and route. Cheap: one map lookup for the
// series a request adds to, an increment and an observation. Requests Fastify's router did not
// match count under the route `unmatched`; the scrapes themselves are not counted.
import type { FastifyInstance } from "fastify";
import { Counter, Histogram, type Registry } from "prom-client";

/** Seconds; from a quick read to a slow export. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series {
  count: { inc(): void };
  latency: { observe(value: number): void };
}

export function recordRequests(app: FastifyInstance, registry: Registry, skip: string): void {
  const requests = new Counter({
    name: "flowplane_http_requests_total",
    help: "HTTP requests answered, by method, route template and status",
    labelNames: ["method", "route", "status"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "flowplane_http_request_duration_seconds",
    help: "Time to answer an HTTP request, by method and route template",
    labelNames: ["method", "route"],
    buckets: BUCKETS,
    registers: [registry],
  });
  const series = new Map<string, Series>();
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url ?? "unmatched";
    if (route !== skip) {
      const { method } = request;
      const status = reply.statusCode;
      const key = `${method} ${status} ${route}`;
      let found = series.get(key);
      if (!found) {
        found = {
          count: requests.labels(method, route, String(status)),
          latency: latency.labels(method, route),
        };
        series.set(key, found);
      }
      found.count.inc();
      found.latency.observe(reply.elapsedTime / 1000);
    }
    done();
  });
}

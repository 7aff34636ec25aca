// GET /metrics: not served without METRICS_TOKEN (an unknown path's answer), 401 without its
// credential or with another, and with it Prometheus' text format whose series show what happened:
// requests by route template and status, rate-limit refusals, instances and devices by state, the
// pool and the access feed on PostgreSQL, the broker's connections. One platform with metrics,
// one without.
import parsePrometheusTextFormat, { type Family } from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ConfigError, loadConfig } from "../../src/env";
import { startServer, type TestServer } from "../support/harness";
import { createTeam, makeUser } from "../support/team-fixtures";
import { waiter } from "../support/until";

const METRICS_TOKEN = "metrics-token-0123456789-abcdefghijklmnop";
const until = waiter(15_000);

let server: TestServer;
let plain: TestServer;
beforeAll(async () => {
  [server, plain] = await Promise.all([
    startServer({
      metricsToken: METRICS_TOKEN,
      broker: "embedded",
      instances: "in-memory",
      // The database's counts are read again at each scrape (5 s by default).
      metricsCountsTtlMs: 0,
      rateLimits: { enabled: true, global: { max: 20, windowMs: 60_000 } },
    }),
    startServer(),
  ]);
}, 60_000);
afterAll(() => Promise.all([server?.close(), plain?.close()]));

const scrapeWith = (target: TestServer, authorization?: string) =>
  fetch(`${target.url}/metrics`, { headers: authorization ? { authorization } : {} });

/**
 * The scrape's families. The parser folds a histogram's labelled series into one: read untyped,
 * each of a histogram's series (`_bucket`, `_sum`, `_count`) makes families of its own, labels kept.
 */
const parse = (text: string) =>
  parsePrometheusTextFormat(text.replace(/^# TYPE \S+ histogram$/gm, ""));

async function scrape(): Promise<Family[]> {
  const reply = await scrapeWith(server, `Bearer ${METRICS_TOKEN}`);
  expect(reply.status).toBe(200);
  return parse(await reply.text());
}

/** The value of the family's sample with these labels (all of them), if there is one. */
function valueOf(families: Family[], name: string, labels: Record<string, string> = {}) {
  // A histogram read untyped comes as one family per run of lines: every family of the name.
  const samples = families.filter((family) => family.name === name).flatMap((f) => f.metrics);
  const sample = samples.find((metric) =>
    Object.entries(labels).every(([key, value]) => metric.labels?.[key] === value),
  );
  return sample?.value === undefined ? undefined : Number(sample.value);
}

describe("access", () => {
  test("METRICS_TOKEN under 32 characters is a configuration error that does not repeat it", () => {
    const short = "metrics-token-too-short";
    expect(() => loadConfig({ METRICS_TOKEN: short })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_TOKEN: short })).toThrow(
      /METRICS_TOKEN: must be at least 32/,
    );
    expect(() => loadConfig({ METRICS_TOKEN: short })).not.toThrow(short);
    expect(loadConfig({ METRICS_TOKEN: METRICS_TOKEN }).METRICS_TOKEN).toBe(METRICS_TOKEN);
  });

  test("without METRICS_TOKEN the path is not served: an unknown path's answer", async () => {
    const [metrics, unknown] = await Promise.all([
      scrapeWith(plain, `Bearer ${METRICS_TOKEN}`),
      fetch(`${plain.url}/metrics-or-not`),
    ]);
    expect(metrics.status).toBe(404);
    expect(metrics.status).toBe(unknown.status);
    expect(metrics.headers.get("content-type")).toBe(unknown.headers.get("content-type"));
  });

  test.each([
    ["no credential", undefined],
    ["another token", "Bearer metrics-token-0123456789-abcdefghijklmnoX"],
    ["the token without its scheme", METRICS_TOKEN],
    ["a person's token", "admin"],
  ])("%s: 401 in the platform's envelope", async (_, authorization) => {
    const reply = await scrapeWith(
      server,
      authorization === "admin" ? `Bearer ${server.adminToken}` : authorization,
    );
    expect(reply.status).toBe(401);
    expect(await reply.json()).toEqual({
      code: "unauthorized",
      error: "unauthorized",
      requestId: expect.any(String),
    });
  });

  test("the token: Prometheus' text format, not rate limited, not in the OpenAPI document", async () => {
    const reply = await scrapeWith(server, `Bearer ${METRICS_TOKEN}`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(reply.headers.get("x-ratelimit-limit")).toBeNull();
    const families = parse(await reply.text());
    expect(valueOf(families, "process_cpu_user_seconds_total")).toBeGreaterThanOrEqual(0);
    expect(
      Object.keys(server.document.paths).filter((path) => !path.startsWith("/api/v1")),
    ).toEqual([]);
  });
});

describe("the series", () => {
  let teamId: string;
  beforeAll(async () => {
    const owner = await makeUser(server);
    teamId = (await createTeam(server, owner)).id;
    const application = await server.request("POST", "/api/v1/applications", {
      token: owner.token,
      body: { name: "Line 1", teamId },
    });
    expect(application.status, application.text).toBe(200);
    const instance = await server.request("POST", "/api/v1/projects", {
      token: owner.token,
      body: { name: `metrics-${Date.now()}`, applicationId: application.body.id },
    });
    expect(instance.status, instance.text).toBe(200);
    for (const name of ["first", "second"]) {
      const device = await server.request("POST", "/api/v1/devices", {
        token: owner.token,
        body: { name, team: teamId },
      });
      expect(device.status, device.text).toBe(200);
      if (name === "first") {
        // The state is the device's free text: one the agent does not know counts as `other`.
        const checkIn = await server.request(
          "POST",
          `/api/v1/devices/${device.body.id}/live/state`,
          {
            token: device.body.credentials.token,
            body: { state: `made-up-${Date.now()}` },
          },
        );
        expect(checkIn.status, checkIn.text).toBe(200);
      }
    }
  });

  test("requests by route template and status, with their latency", async () => {
    const before = await scrape();
    const missing = "0".repeat(10);
    await server.request("GET", `/api/v1/teams/${teamId}`);
    await server.request("GET", `/api/v1/teams/${missing}`);
    await server.request("GET", `/api/v1/no-such-route/${missing}`);
    await fetch(`${server.url}/no-such-page/${missing}`);
    const after = await scrape();

    const count = (families: Family[], status: string) =>
      valueOf(families, "flowplane_http_requests_total", {
        method: "GET",
        route: "/api/v1/teams/:teamId",
        status,
      }) ?? 0;
    expect(count(after, "200") - count(before, "200")).toBe(1);
    expect(count(after, "404") - count(before, "404")).toBe(1);
    // Paths no route has (under /api and outside it): one series, whatever the URL.
    const unmatched = (families: Family[]) =>
      valueOf(families, "flowplane_http_requests_total", { route: "unmatched", status: "404" }) ??
      0;
    expect(unmatched(after) - unmatched(before)).toBe(2);
    const latency = (families: Family[]) =>
      valueOf(families, "flowplane_http_request_duration_seconds_count", {
        method: "GET",
        route: "/api/v1/teams/:teamId",
      }) ?? 0;
    expect(latency(after) - latency(before)).toBe(2);
    // No series names a URL, and the scrapes are not counted.
    const routes = after
      .find((family) => family.name === "flowplane_http_requests_total")!
      .metrics.map((sample) => sample.labels!.route!);
    expect(routes.filter((route) => route.includes(teamId) || route.includes(missing))).toEqual([]);
    expect(routes).not.toContain("/metrics");
  });

  test("a 429 shows in the rate-limit refusals, by limit", async () => {
    const flooder = await makeUser(server);
    const replies = [];
    for (let i = 0; i < 21; i++) {
      replies.push(await server.request("GET", "/api/v1/user", { token: flooder.token }));
    }
    expect(replies.at(-1)!.status).toBe(429);
    const families = await scrape();
    expect(valueOf(families, "flowplane_rate_limit_refusals_total", { limit: "global" })).toBe(1);
    expect(
      valueOf(families, "flowplane_http_requests_total", {
        route: "/api/v1/user",
        status: "429",
      }),
    ).toBe(1);
  });

  test("instances and devices by state, as the database has them", async () => {
    const families = await until("the counts", async () => {
      const found = await scrape();
      return valueOf(found, "flowplane_devices", { state: "other" }) === 1 ? found : undefined;
    });
    expect(valueOf(families, "flowplane_devices", { state: "unknown" })).toBe(1);
    const deviceStates = families
      .find((family) => family.name === "flowplane_devices")!
      .metrics.map((sample) => sample.labels!.state);
    expect(deviceStates.filter((state) => state!.startsWith("made-up"))).toEqual([]);
    expect(valueOf(families, "flowplane_instances", { state: "running" })).toBe(1);
    expect(valueOf(families, "flowplane_instances", { state: "stopped" })).toBe(0);
    expect(valueOf(families, "flowplane_instances", { state: "suspended" })).toBe(0);
    expect(valueOf(families, "flowplane_events_unnumbered")).toBeGreaterThanOrEqual(0);
    expect(valueOf(families, "flowplane_events_newest_seq")).toBeGreaterThanOrEqual(0);
    expect(valueOf(families, "flowplane_webhook_deliveries_queued", { state: "pending" })).toBe(0);
    expect(valueOf(families, "flowplane_webhook_deliveries_queued", { state: "failing" })).toBe(0);
  });

  test("the token is never logged", () => {
    expect(server.logs.join("\n")).not.toContain(METRICS_TOKEN);
  });

  test("the broker's connections; the pool and the access feed on PostgreSQL", async () => {
    const families = await scrape();
    expect(valueOf(families, "flowplane_broker_clients")).toBeGreaterThanOrEqual(0);
    expect(valueOf(families, "flowplane_device_sessions")).toBe(0);
    if (server.testDb.config.kind !== "pglite") {
      expect(
        valueOf(families, "flowplane_db_pool_connections", { state: "total" }),
      ).toBeGreaterThan(0);
      expect(valueOf(families, "flowplane_db_pool_connections", { state: "waiting" })).toBe(0);
      expect(valueOf(families, "flowplane_access_feed_connected")).toBe(1);
      expect(valueOf(families, "flowplane_access_feed_generation")).toBeGreaterThan(0);
    } else {
      // PGlite: one connection in the process, no pool, no feed.
      expect(valueOf(families, "flowplane_db_pool_connections")).toBeUndefined();
      expect(valueOf(families, "flowplane_access_feed_connected")).toBeUndefined();
    }
  });
});

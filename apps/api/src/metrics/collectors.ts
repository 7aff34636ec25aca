// What a scrape reads, beyond the requests (requests.ts): the process (prom-client's defaults),
// the database's pool, the access feed, the broker's connections, the rate limits' refusals, and
// a few counts read from the database (instances and devices by state, the events' and webhook
// deliveries' queues) — those at most once per COUNTS_TTL_MS (5 s), however often it is scraped.
import { type Db, metricsCounts, type MetricsCounts, poolStats } from "@flowplane/db";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { collectDefaultMetrics, Counter, Gauge, type Registry } from "prom-client";
import type { Platform } from "../plugins/area";

/** How long the database's counts are reused between scrapes, by default. */
const COUNTS_TTL_MS = 5_000;

/** An instance's desired states: each is reported, 0 included, so that alerts see it. */
const INSTANCE_STATES: readonly string[] = ["running", "stopped", "suspended"];

/**
 * The states a device agent reports (its `getState()`; /work/shared/reference/device-agent.md),
 * `unknown` also before any check-in. The state is the device's free text: anything else counts
 * as `other`, so that a device cannot make series of its own.
 */
const DEVICE_STATES: readonly string[] = [
  "unknown",
  "provisioning",
  "loading",
  "installing",
  "updating",
  "starting",
  "restarting",
  "running",
  "safe",
  "stopping",
  "stopped",
  "suspended",
  "crashed",
  "error",
];

/** Sets `gauge` by state, a state outside `known` counted under `other`. */
function setByState(gauge: Gauge, known: readonly string[], found: Record<string, number>): void {
  const totals = new Map<string, number>();
  for (const [state, value] of Object.entries(found)) {
    const label = known.includes(state) ? state : "other";
    totals.set(label, (totals.get(label) ?? 0) + value);
  }
  for (const [state, value] of totals) gauge.set({ state }, value);
}

/** The database's counts, read at most once per COUNTS_TTL_MS (a failed read is not kept). */
function cachedCounts(db: Db, log: FastifyBaseLogger, ttlMs: number) {
  let kept: { at: number; counts: Promise<MetricsCounts | undefined> } | undefined;
  return () => {
    const now = Date.now();
    if (!kept || now - kept.at >= ttlMs) {
      const counts = metricsCounts(db).catch((error: unknown) => {
        log.warn({ err: error }, "metrics: the database's counts could not be read");
        kept = undefined;
        return undefined;
      });
      kept = { at: now, counts };
    }
    return kept.counts;
  };
}

export function registerCollectors(
  registry: Registry,
  app: FastifyInstance,
  { db, authenticator, limits, services, options }: Platform,
): void {
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  if (poolStats(db)) {
    new Gauge({
      name: "flowplane_db_pool_connections",
      help: "The PostgreSQL pool's connections: total (open), idle, and waiting (requests waiting for one)",
      labelNames: ["state"],
      registers,
      collect() {
        const stats = poolStats(db);
        if (!stats) return;
        for (const [state, value] of Object.entries(stats)) this.set({ state }, value);
      },
    });
  }

  const feed = authenticator.feed;
  if (feed) {
    new Gauge({
      name: "flowplane_access_feed_connected",
      help: "1 while the access feed listens for access changes (PostgreSQL), else 0",
      registers,
      collect() {
        this.set(feed.live ? 1 : 0);
      },
    });
    new Gauge({
      name: "flowplane_access_feed_generation",
      help: "The access feed's generation: moves on every change heard and every loss or gain of its connection",
      registers,
      collect() {
        this.set(feed.generation);
      },
    });
  }

  if (app.embeddedBroker) {
    const broker = app.embeddedBroker;
    new Gauge({
      name: "flowplane_broker_clients",
      help: "MQTT clients connected to the embedded broker",
      registers,
      collect() {
        this.set(broker.clients);
      },
    });
  }
  if (services.deviceChannel) {
    const channel = services.deviceChannel;
    new Gauge({
      name: "flowplane_device_sessions",
      help: "Devices holding a session on the devices' channel (over the team broker)",
      registers,
      collect() {
        this.set(channel.sessions);
      },
    });
  }

  // A counter read from the rate limits' own tally: what it grew by since the last scrape.
  const counted: Record<string, number> = {};
  new Counter({
    name: "flowplane_rate_limit_refusals_total",
    help: "Requests refused with 429, by limit",
    labelNames: ["limit"],
    registers,
    collect() {
      for (const [limit, total] of Object.entries(limits.refusals)) {
        this.inc({ limit }, total - (counted[limit] ?? 0));
        counted[limit] = total;
      }
    },
  });

  const counts = cachedCounts(db, app.log, options.metricsCountsTtlMs ?? COUNTS_TTL_MS);
  const fromCounts = (
    name: string,
    help: string,
    read: (counts: MetricsCounts, gauge: Gauge) => void,
    labelNames: string[] = [],
  ) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      async collect() {
        const found = await counts();
        this.reset();
        if (found) read(found, this);
      },
    });
  fromCounts(
    "flowplane_instances",
    "Hosted instances by desired state (read from the database, at most every 5 s)",
    (found, gauge) => {
      for (const state of INSTANCE_STATES) gauge.set({ state }, 0);
      setByState(gauge, INSTANCE_STATES, found.instances);
    },
    ["state"],
  );
  fromCounts(
    "flowplane_devices",
    "Devices by the state they last reported (one the agent knows, else other), unknown before any (read from the database, at most every 5 s)",
    (found, gauge) => {
      setByState(gauge, DEVICE_STATES, found.devices);
    },
    ["state"],
  );
  fromCounts(
    "flowplane_events_unnumbered",
    "Events written and not yet numbered by the sequencer (the backlog)",
    (found, gauge) => gauge.set(found.eventsUnnumbered),
  );
  fromCounts("flowplane_events_newest_seq", "The newest event's number (seq)", (found, gauge) =>
    gauge.set(found.eventsNewestSeq),
  );
  fromCounts(
    "flowplane_webhook_deliveries_queued",
    "Webhook deliveries waiting: pending (not tried yet) and failing (tried, retrying)",
    (found, gauge) => {
      gauge.set({ state: "pending" }, found.deliveriesPending);
      gauge.set({ state: "failing" }, found.deliveriesFailing);
    },
    ["state"],
  );
}

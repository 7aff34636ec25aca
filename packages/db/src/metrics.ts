// What the metrics endpoint reads of the database at a scrape (apps/api/src/metrics/): a few
// counts, each answered from an index or a small table, read together.
import { sql } from "kysely";
import type { Db } from "./create-db";

export interface MetricsCounts {
  /** Hosted instances by their desired state. */
  instances: Record<string, number>;
  /** Devices by the state they last reported (`unknown`: none yet). */
  devices: Record<string, number>;
  /** Events written and not yet numbered by the sequencer. */
  eventsUnnumbered: number;
  /** The newest event's number (0: none yet). */
  eventsNewestSeq: number;
  /** Webhook deliveries waiting: never tried, and tried and failed (retrying). */
  deliveriesPending: number;
  deliveriesFailing: number;
}

const byState = (rows: { state: string | null; count: number }[], fallback: string) =>
  Object.fromEntries(rows.map((row) => [row.state ?? fallback, row.count]));

export async function metricsCounts(db: Db): Promise<MetricsCounts> {
  const [instances, devices, events, deliveries] = await Promise.all([
    db
      .selectFrom("projects")
      .select(["state", sql<number>`count(*)::int`.as("count")])
      .groupBy("state")
      .execute(),
    db
      .selectFrom("devices")
      .select(["state", sql<number>`count(*)::int`.as("count")])
      .groupBy("state")
      .execute(),
    sql<{ unnumbered: number; newest: string | null }>`
      select (select count(*)::int from events where seq is null) as unnumbered,
             (select max(seq) from events) as newest`.execute(db),
    db
      .selectFrom("webhook_deliveries")
      .where("status", "=", "pending")
      .select([
        sql<number>`(count(*) filter (where jsonb_array_length(attempts) = 0))::int`.as("pending"),
        sql<number>`(count(*) filter (where jsonb_array_length(attempts) > 0))::int`.as("failing"),
      ])
      .executeTakeFirstOrThrow(),
  ]);
  const totals = events.rows[0]!;
  return {
    instances: byState(instances, "unknown"),
    devices: byState(devices, "unknown"),
    eventsUnnumbered: totals.unnumbered,
    eventsNewestSeq: Number(totals.newest ?? 0),
    deliveriesPending: deliveries.pending,
    deliveriesFailing: deliveries.failing,
  };
}

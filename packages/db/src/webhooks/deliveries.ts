// The delivery queue: one row per (hook, event), claimed by whichever API process comes first
// (`for update skip locked`) under a lease, so that each is sent by one process at a time and a
// process that dies mid-send leaves a row that is tried again once its lease has run out.
import { type Kysely, type Selectable, sql } from "kysely";
import { newId } from "../ids";
import { countAll, keysetPage, type Page, type PageRequest } from "../paging";
import type { Database } from "../schema";
import type { DeliveryAttempt, WebhookDeliveriesTable } from "../schema-events";
import { fromJson } from "./hooks";

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

const normal = (row: DeliveryRow): DeliveryRow => ({
  ...row,
  payload: fromJson<Record<string, unknown>>(row.payload),
  attempts: fromJson<DeliveryAttempt[]>(row.attempts),
});

export interface NewDelivery {
  webhookId: string;
  teamId: string;
  eventId: string;
  eventType: string;
  payload: Record<string, unknown>;
}

export async function enqueueDeliveries(
  db: Kysely<Database>,
  deliveries: NewDelivery[],
): Promise<void> {
  // In chunks: a statement's parameters are counted in 16 bits.
  for (let start = 0; start < deliveries.length; start += DELIVERIES_PER_STATEMENT) {
    await insertDeliveries(db, deliveries.slice(start, start + DELIVERIES_PER_STATEMENT));
  }
}

const DELIVERIES_PER_STATEMENT = 1000;

async function insertDeliveries(db: Kysely<Database>, deliveries: NewDelivery[]) {
  await db
    .insertInto("webhook_deliveries")
    .values(
      deliveries.map((d) => ({
        id: newId(),
        webhook_id: d.webhookId,
        team_id: d.teamId,
        event_id: d.eventId,
        event_type: d.eventType,
        payload: JSON.stringify(d.payload),
      })),
    )
    .execute();
}

/** A claimed delivery, with what sending it needs: the hook's URL and sealed secret. */
export interface ClaimedDelivery extends DeliveryRow {
  url: string;
  secret: string;
  lease_until: Date;
}

/** Takes up to `limit` due deliveries for `leaseMs`: no other process takes them meanwhile. */
export async function claimDeliveries(
  db: Kysely<Database>,
  limit: number,
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  const { rows } = await sql<DeliveryRow & { url: string; secret: string }>`
    with due as (
      select id from webhook_deliveries
      where status = 'pending' and next_attempt_at <= now()
        and (lease_until is null or lease_until < now())
      order by next_attempt_at limit ${limit}
      for update skip locked
    )
    update webhook_deliveries d
    -- To the millisecond: the lease is compared again as a JavaScript date (recordAttempt).
    set lease_until = date_trunc('milliseconds', now() + make_interval(secs => ${leaseMs / 1000}::float8))
    from due, webhooks h
    where d.id = due.id and h.id = d.webhook_id
    returning d.*, h.url, h.secret`.execute(db);
  return rows.map((row) => ({
    ...normal(row),
    url: row.url,
    secret: row.secret,
  })) as ClaimedDelivery[];
}

/**
 * Writes an attempt's outcome, if the lease is still this process's (a lease that ran out and was
 * taken again belongs to the other process now). `next` null: the delivery is done (`status`).
 */
export async function recordAttempt(
  db: Kysely<Database>,
  delivery: { id: string; lease_until: Date },
  attempt: DeliveryAttempt,
  outcome: { status: "pending"; next: Date } | { status: "succeeded" | "failed" },
): Promise<boolean> {
  const result = await db
    .updateTable("webhook_deliveries")
    .set({
      status: outcome.status,
      attempts: sql`attempts || ${JSON.stringify([attempt])}::jsonb` as never,
      ...(outcome.status === "pending" && { next_attempt_at: outcome.next }),
      lease_until: null,
      updated_at: new Date(),
    })
    .where("id", "=", delivery.id)
    .where("lease_until", "=", delivery.lease_until)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function listDeliveries(
  db: Kysely<Database>,
  webhookId: string,
  page: PageRequest,
): Promise<Page<DeliveryRow>> {
  const rows = db.selectFrom("webhook_deliveries").selectAll().where("webhook_id", "=", webhookId);
  const count = db
    .selectFrom("webhook_deliveries")
    .select(countAll())
    .where("webhook_id", "=", webhookId);
  const found = await keysetPage(
    rows,
    count,
    { table: "webhook_deliveries", key: "created_at" },
    page,
  );
  return { ...found, rows: found.rows.map(normal) };
}

export async function findDelivery(
  db: Kysely<Database>,
  webhookId: string,
  id: string,
): Promise<DeliveryRow | undefined> {
  const row = await db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("webhook_id", "=", webhookId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && normal(row);
}

/** Due now again, whatever it came to: a new attempt, under the same delivery id. */
export async function redeliver(db: Kysely<Database>, id: string): Promise<DeliveryRow> {
  const row = await db
    .updateTable("webhook_deliveries")
    .set({
      status: "pending",
      next_attempt_at: new Date(),
      lease_until: null,
      updated_at: new Date(),
    })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return normal(row);
}

/** Removes deliveries done before `olderThan`; answers how many went. */
export async function pruneDeliveries(db: Kysely<Database>, olderThan: Date): Promise<number> {
  const result = await db
    .deleteFrom("webhook_deliveries")
    .where("status", "!=", "pending")
    .where("updated_at", "<", olderThan)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Gives a claimed delivery back untried (its process is closing): due again at once. */
export async function releaseDelivery(
  db: Kysely<Database>,
  delivery: { id: string; lease_until: Date },
): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set({ lease_until: null })
    .where("id", "=", delivery.id)
    .where("lease_until", "=", delivery.lease_until)
    .execute();
}

// Gives committed events their public, ordered id. A writer's transaction cannot take the next
// number itself: a later number could commit first, and a reader past it would never see the
// earlier one. Instead one sequencer at a time (an advisory lock per schema, whatever the number
// of API processes) numbers the committed rows still without one, in the order they were written,
// and runs the consumers (webhook deliveries, notifications) in that same transaction, so each
// event reaches each consumer exactly once. Its commit notifies `flowplane_events`. Each consumer
// runs under a savepoint of its own: one that fails (a bug, bad data) loses its own work for that
// batch, told to `onConsumerError`, and never stops the numbering, which every team's stream,
// hooks and inbox wait on.
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema";
import { type EventRecord, type EventRow, recordOf } from "./read";

/** Runs in the sequencing transaction, with the events it numbered, oldest first. */
export type EventConsumer = (trx: Kysely<Database>, events: EventRecord[]) => Promise<void>;

export const EVENTS_CHANNEL = "flowplane_events";
const BATCH = 500;

/** Numbers one batch; answers the events numbered (none: nothing waited, or another holds it). */
export async function sequenceEvents(
  db: Kysely<Database>,
  consumers: EventConsumer[] = [],
  onConsumerError: (error: unknown) => void = () => {},
): Promise<EventRecord[]> {
  return db.transaction().execute(async (trx) => {
    const { rows: locked } = await sql<{ locked: boolean }>`
      select pg_try_advisory_xact_lock(hashtext(current_schema() || ':flowplane-events')) as locked`.execute(
      trx,
    );
    if (!locked[0]?.locked) return [];
    const waiting = await trx
      .selectFrom("events")
      .select(["id"])
      .where("seq", "is", null)
      .orderBy("id")
      .limit(BATCH)
      .execute();
    if (waiting.length === 0) return [];
    const { rows: numbers } = await sql<{ seq: string }>`
      select nextval('event_seq')::text as seq from generate_series(1, ${waiting.length})`.execute(
      trx,
    );
    const ordered = numbers.map((n) => BigInt(n.seq)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const pairs = waiting.map(
      (row, i) => sql`(${String(row.id)}::bigint, ${String(ordered[i])}::bigint)`,
    );
    const { rows } = await sql<EventRow>`
      update events set seq = v.seq from (values ${sql.join(pairs)}) as v(id, seq)
      where events.id = v.id
      returning events.seq::text as seq, type, team_id, entity_type, entity_id, actor_id, token_id,
        data, created_at`.execute(trx);
    const events: EventRecord[] = rows
      .map(recordOf)
      .sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
    for (const consume of consumers) {
      await sql`savepoint event_consumer`.execute(trx);
      try {
        await consume(trx, events);
        await sql`release savepoint event_consumer`.execute(trx);
      } catch (error) {
        await sql`rollback to savepoint event_consumer`.execute(trx);
        onConsumerError(error);
      }
    }
    const last = events[events.length - 1]!.seq;
    await sql`select pg_notify(${EVENTS_CHANNEL}, ${last})`.execute(trx);
    return events;
  });
}

// Reading events in their order (the stream's and the JSON list's), and retention.
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema";

/** An event as stored, with its public id (`seq`) as text: a bigint. */
export interface EventRecord {
  seq: string;
  type: string;
  teamId: string | null;
  entityType: string;
  entityId: string | null;
  actorId: string | null;
  tokenId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
}

export interface EventFilter {
  teamId: string;
  /** Only events after this public id. */
  after?: bigint;
  types?: string[];
  /** Only events of this resource (`device`, and optionally its id). */
  entityType?: string;
  entityId?: string;
  /** Only events about these kinds of resource (what the reader's role may see). */
  entityTypes?: string[];
  limit: number;
}

const columns = sql<string>`seq::text`;

/** A team's sequenced events after a cursor, oldest first. */
export async function listEvents(
  db: Kysely<Database>,
  filter: EventFilter,
): Promise<EventRecord[]> {
  let query = db
    .selectFrom("events")
    .select([
      columns.as("seq"),
      "type",
      "team_id",
      "entity_type",
      "entity_id",
      "actor_id",
      "token_id",
      "data",
      "created_at",
    ])
    .where("team_id", "=", filter.teamId)
    .where("seq", "is not", null)
    .where("seq", ">", String(filter.after ?? 0n) as never)
    // The table's column, not the text alias: ORDER BY a name takes the output column first, and
    // text orders "10" before "9".
    .orderBy("events.seq")
    .limit(filter.limit);
  if (filter.types?.length) query = query.where("type", "in", filter.types);
  if (filter.entityType) query = query.where("entity_type", "=", filter.entityType);
  if (filter.entityId) query = query.where("entity_id", "=", filter.entityId);
  if (filter.entityTypes) {
    if (filter.entityTypes.length === 0) return [];
    query = query.where("entity_type", "in", filter.entityTypes);
  }
  const rows = await query.execute();
  return rows.map((row) => recordOf({ ...row, seq: row.seq as string }));
}

/** An event's row as queries answer it (seq as text). */
export interface EventRow {
  seq: string;
  type: string;
  team_id: string | null;
  entity_type: string;
  entity_id: string | null;
  actor_id: string | null;
  token_id: string | null;
  data: Record<string, unknown> | string;
  created_at: Date;
}

/** The record of a row: its JSON parsed where the driver answers text (PGlite may). */
export const recordOf = (row: EventRow): EventRecord => ({
  seq: row.seq,
  type: row.type,
  teamId: row.team_id,
  entityType: row.entity_type,
  entityId: row.entity_id,
  actorId: row.actor_id,
  tokenId: row.token_id,
  data: (typeof row.data === "string" ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
  createdAt: row.created_at,
});

/** The newest public id given so far (0: none): where a new follower without a cursor starts. */
export async function latestEventSeq(db: Kysely<Database>): Promise<bigint> {
  const { rows } = await sql<{ seq: string | null }>`
    select max(seq)::text as seq from events`.execute(db);
  const retained = BigInt(rows[0]?.seq ?? "0");
  const pruned = await prunedThrough(db);
  return retained > pruned ? retained : pruned;
}

/** The newest public id retention removed: a cursor below it has missed events. */
export async function prunedThrough(db: Kysely<Database>): Promise<bigint> {
  const { rows } = await sql<{ through: string }>`
    select pruned_through::text as through from event_retention where id = 1`.execute(db);
  return BigInt(rows[0]?.through ?? "0");
}

/** Removes sequenced events older than the window; answers how many went. */
export async function pruneEvents(db: Kysely<Database>, olderThan: Date): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ removed: string; through: string | null }>`
      with gone as (
        delete from events where seq is not null and created_at < ${olderThan} returning seq
      )
      select count(*)::text as removed, max(seq)::text as through from gone`.execute(trx);
    const through = rows[0]?.through;
    if (through) {
      await sql`update event_retention set pruned_through = greatest(pruned_through, ${through}::bigint)
        where id = 1`.execute(trx);
    }
    return Number(rows[0]?.removed ?? 0);
  });
}

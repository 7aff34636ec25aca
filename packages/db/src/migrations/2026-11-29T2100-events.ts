// Events: every audit entry, and what the platform tells integrators that is not audited (a device
// online or offline, an instance crashed, a deploy's progress). A row is written in its change's
// transaction (an audit entry's by the trigger below) with no order of its own; the sequencer
// (events/sequencer.ts) gives committed rows their public, ordered id (`seq`) one batch at a time
// under a lock, so that a reader who has seen seq N will never later see a new row below N.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("events")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    /** The public id, in the order readers see: null until the sequencer reaches the row. */
    .addColumn("seq", "bigint", (c) => c.unique())
    .addColumn("type", "text", (c) => c.notNull())
    /** The team whose stream carries it (null: a user's or the platform's own). */
    .addColumn("team_id", "text")
    .addColumn("entity_type", "text", (c) => c.notNull())
    .addColumn("entity_id", "text")
    .addColumn("actor_id", "text")
    .addColumn("token_id", "text")
    /** The audit entry it was, if it was one. */
    .addColumn("audit_id", "text")
    .addColumn("data", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index events_unsequenced on events (id) where seq is null`.execute(db);
  await sql`create index events_team on events (team_id, seq) where seq is not null`.execute(db);
  await sql`create sequence event_seq`.execute(db);
  // What retention has removed: a reader behind it has missed events and is told so.
  await db.schema
    .createTable("event_retention")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("pruned_through", "bigint", (c) => c.notNull())
    .execute();
  await sql`insert into event_retention (id, pruned_through) values (1, 0)`.execute(db);

  await sql`
    create function flowplane_audit_event() returns trigger language plpgsql as $$
    begin
      insert into events (type, team_id, entity_type, entity_id, actor_id, token_id, audit_id, data, created_at)
      values (new.event, new.team_id, new.entity_type, new.entity_id, new.actor_id, new.token_id,
              new.id, new.body, new.created_at);
      return null;
    end $$`.execute(db);
  await sql`create trigger audit_event after insert on audit_log
    for each row execute function flowplane_audit_event()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists audit_event on audit_log`.execute(db);
  await sql`drop function if exists flowplane_audit_event()`.execute(db);
  await db.schema.dropTable("event_retention").ifExists().execute();
  await sql`drop sequence if exists event_seq`.execute(db);
  await db.schema.dropTable("events").ifExists().execute();
}

// Webhooks (docs/webhooks.md): a team's hooks, and the delivery queue, which lives in the database
// so that deliveries survive a restart and several API processes share it (each claims due rows
// with `for update skip locked` and a lease: a process that dies mid-send leaves a lease that
// runs out, and the row is tried again).
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("webhooks")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("url", "text", (c) => c.notNull())
    /** The event types it hears (an empty list: every type). */
    .addColumn("event_types", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("active", "boolean", (c) => c.notNull().defaultTo(true))
    /** The signing secret, sealed under a key derived from the platform's secret. */
    .addColumn("secret", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index webhooks_team on webhooks (team_id, created_at)`.execute(db);
  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("webhook_id", "text", (c) =>
      c.notNull().references("webhooks.id").onDelete("cascade"),
    )
    .addColumn("team_id", "text", (c) => c.notNull())
    /** The event's public id (its seq), and its type. */
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("event_type", "text", (c) => c.notNull())
    /** The envelope as sent: it outlives the event's retention. */
    .addColumn("payload", "jsonb", (c) => c.notNull())
    /** pending, succeeded or failed. */
    .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
    .addColumn("attempts", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    /** Who holds it until when (a process sending it); past: free to claim again. */
    .addColumn("lease_until", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at)
    where status = 'pending'`.execute(db);
  await sql`create index webhook_deliveries_hook on webhook_deliveries (webhook_id, created_at)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("webhook_deliveries").ifExists().execute();
  await db.schema.dropTable("webhooks").ifExists().execute();
}

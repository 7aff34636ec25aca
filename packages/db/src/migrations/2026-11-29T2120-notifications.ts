// Notifications: a person's inbox (FlowFuse's `/api/v1/user/notifications`), fed by the events that
// concern them (an invitation, a device of their team offline, a failed deploy). The rows of one
// event are written by one `insert … select` over the team's members, in the sequencer's
// transaction, so their ids are made by the database (32 hex characters of a random UUID).
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("notifications")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("data", "jsonb", (c) => c.notNull())
    .addColumn("read", "boolean", (c) => c.notNull().defaultTo(false))
    /** The event it came from (its public id): no foreign key, events are pruned sooner. */
    .addColumn("event_seq", "bigint")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // A person's page, newest first, and their unread count (the badge on every page).
  await sql`create index notifications_user
    on notifications (user_id, created_at desc, coalesce(event_seq, 0) desc, id desc)`.execute(db);
  await sql`create index notifications_unread on notifications (user_id) where not read`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("notifications").ifExists().execute();
}

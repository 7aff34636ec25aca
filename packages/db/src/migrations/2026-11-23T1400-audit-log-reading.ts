// Reading the audit log a page at a time, newest first, at the same cost however long it grows: each
// log (a team's, the platform's, a user's) has an index in its keyset order (created_at, id), so a
// page is one index range scan from the cursor. They replace the first indexes, which lacked `id`.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("audit_log_team").ifExists().execute();
  await db.schema.dropIndex("audit_log_entity").ifExists().execute();

  // A team's log, and the same narrowed to events (the usual filter: one event name).
  await db.schema
    .createIndex("audit_log_team_page")
    .on("audit_log")
    .expression(sql`team_id, created_at desc, id desc`)
    .where(sql.ref("team_id"), "is not", null)
    .execute();
  await db.schema
    .createIndex("audit_log_team_event_page")
    .on("audit_log")
    .expression(sql`team_id, event, created_at desc, id desc`)
    .where(sql.ref("team_id"), "is not", null)
    .execute();
  // The platform's log (administrators): platform and account events. The queries repeat this
  // predicate as literal SQL, so the planner can match it even in a generic plan.
  await db.schema
    .createIndex("audit_log_platform_page")
    .on("audit_log")
    .expression(sql`created_at desc, id desc`)
    .where(sql<boolean>`entity_type in ('platform', 'user')`)
    .execute();
  // A user's own log: entries about their account, and changes they made to accounts.
  await db.schema
    .createIndex("audit_log_entity_page")
    .on("audit_log")
    .expression(sql`entity_type, entity_id, created_at desc, id desc`)
    .execute();
  await db.schema
    .createIndex("audit_log_user_actor_page")
    .on("audit_log")
    .expression(sql`actor_id, created_at desc, id desc`)
    .where(sql<boolean>`entity_type = 'user'`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of [
    "audit_log_user_actor_page",
    "audit_log_entity_page",
    "audit_log_platform_page",
    "audit_log_team_event_page",
    "audit_log_team_page",
  ]) {
    await db.schema.dropIndex(index).ifExists().execute();
  }
  await db.schema
    .createIndex("audit_log_entity")
    .on("audit_log")
    .columns(["entity_type", "entity_id", "created_at"])
    .execute();
  await db.schema
    .createIndex("audit_log_team")
    .on("audit_log")
    .columns(["team_id", "created_at"])
    .execute();
}

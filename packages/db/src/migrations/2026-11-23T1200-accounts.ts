// Accounts people sign in to: passwords, suspension, a default team, and server-side sessions.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("users")
    .addColumn("password_hash", "text")
    .addColumn("password_expired", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("suspended", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("default_team_id", "text", (c) => c.references("teams.id").onDelete("set null"))
    .execute();
  // Sign-in takes a username or an email in any case: both unique without regard to case.
  await db.schema
    .createIndex("users_username_lower")
    .on("users")
    .unique()
    .expression(sql`lower(username)`)
    .execute();
  await db.schema
    .createIndex("users_email_lower")
    .on("users")
    .unique()
    .expression(sql`lower(email)`)
    .where(sql.ref("email"), "is not", null)
    .execute();
  await db.schema
    .createIndex("users_created_at_id")
    .on("users")
    .columns(["created_at", "id"])
    .execute();

  await db.schema
    .createTable("sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    /** HMAC-SHA-256 of the cookie's value, as for tokens; the value is never stored. */
    .addColumn("digest", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("last_seen_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();
  // Requests made in a signed-in browser have no token: their audit entries' source is null.
  await db.schema
    .alterTable("audit_log")
    .alterColumn("source", (c) => c.dropNotNull())
    .execute();

  await db.schema.createIndex("sessions_user_id").on("sessions").column("user_id").execute();
  await db.schema.createIndex("sessions_expires_at").on("sessions").column("expires_at").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("sessions").ifExists().execute();
  await db.schema
    .alterTable("audit_log")
    .alterColumn("source", (c) => c.setNotNull())
    .execute();
  await db.schema.dropIndex("users_created_at_id").ifExists().execute();
  await db.schema.dropIndex("users_email_lower").ifExists().execute();
  await db.schema.dropIndex("users_username_lower").ifExists().execute();
  await db.schema
    .alterTable("users")
    .dropColumn("default_team_id")
    .dropColumn("suspended")
    .dropColumn("password_expired")
    .dropColumn("password_hash")
    .execute();
}

// Users, teams, memberships, personal access tokens and the audit log.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("users")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("username", "text", (c) => c.notNull().unique())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("email", "text")
    .addColumn("admin", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable("teams")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("slug", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("teams_created_at_id")
    .on("teams")
    .columns(["created_at", "id"])
    .execute();

  await db.schema
    .createTable("team_members")
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("role", "smallint", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("team_members_pk", ["team_id", "user_id"])
    .execute();
  await db.schema
    .createIndex("team_members_user_id")
    .on("team_members")
    .column("user_id")
    .execute();

  await db.schema
    .createTable("access_tokens")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("parent_id", "text", (c) => c.references("access_tokens.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("digest", "text", (c) => c.notNull().unique())
    .addColumn("read_only", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("admin_opt_in", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("team_restricted", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("expires_at", "timestamptz")
    .addColumn("last_used_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("access_tokens_user_id")
    .on("access_tokens")
    .column("user_id")
    .execute();
  await db.schema
    .createIndex("access_tokens_parent_id")
    .on("access_tokens")
    .column("parent_id")
    .execute();
  await db.schema
    .createIndex("access_tokens_expires_at")
    .on("access_tokens")
    .column("expires_at")
    .where(sql.ref("expires_at"), "is not", null)
    .execute();

  await db.schema
    .createTable("access_token_teams")
    .addColumn("token_id", "text", (c) =>
      c.notNull().references("access_tokens.id").onDelete("cascade"),
    )
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addPrimaryKeyConstraint("access_token_teams_pk", ["token_id", "team_id"])
    .execute();
  await db.schema
    .createIndex("access_token_teams_team_id")
    .on("access_token_teams")
    .column("team_id")
    .execute();

  await db.schema
    .createTable("audit_log")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("entity_type", "text", (c) => c.notNull())
    .addColumn("entity_id", "text")
    .addColumn("team_id", "text")
    .addColumn("actor_id", "text")
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("token_id", "text")
    .addColumn("body", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
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

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    "audit_log",
    "access_token_teams",
    "access_tokens",
    "team_members",
    "teams",
    "users",
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

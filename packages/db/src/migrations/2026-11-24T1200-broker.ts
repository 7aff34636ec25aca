// The team broker: each team's MQTT clients (credentials and ACLs), and the tokens an external
// broker (EMQX) uses to ask the platform who may connect and what they may do.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("team_broker_clients")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("username", "text", (c) => c.notNull())
    .addColumn("password_hash", "text", (c) => c.notNull())
    .addColumn("acls", "jsonb", (c) => c.notNull())
    .addColumn("owner_type", "text")
    .addColumn("owner_id", "text")
    /** Bumped by every change: cached decisions made for an older version are not used. */
    .addColumn("version", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // Usernames are case-sensitive on the wire (MQTT), so the unique key is too.
  await db.schema
    .createIndex("team_broker_clients_team_username")
    .on("team_broker_clients")
    .unique()
    .columns(["team_id", "username"])
    .execute();

  await db.schema
    .createTable("broker_tokens")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    /** HMAC-SHA-256 of the value, keyed by the server secret, as access tokens. */
    .addColumn("digest", "text", (c) => c.notNull().unique())
    .addColumn("created_by", "text", (c) => c.references("users.id").onDelete("set null"))
    .addColumn("last_used_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("broker_tokens").ifExists().execute();
  await db.schema.dropTable("team_broker_clients").ifExists().execute();
}

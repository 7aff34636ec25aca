// Remote devices and the team's provisioning tokens. A device's token and its one-time code are
// kept only as HMAC digests; its credential secret is kept as given, since every snapshot a
// device downloads has its credentials encrypted with it.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("devices")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("application_id", "text", (c) =>
      c.references("applications.id").onDelete("set null"),
    )
    .addColumn("project_id", "text", (c) => c.references("projects.id").onDelete("set null"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull().defaultTo(""))
    /** HMAC of the device's token (`fpd_…`). */
    .addColumn("token_digest", "text", (c) => c.notNull().unique())
    /** HMAC of the one-time code; null once it has been used. */
    .addColumn("otc_digest", "text", (c) => c.unique())
    .addColumn("credential_secret", "text", (c) => c.notNull())
    /** `{ env: [{ name, value, hidden }] }` */
    .addColumn("settings", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    /** The hash of the settings the device should run, as its check-in compares it. */
    .addColumn("settings_hash", "text", (c) => c.notNull())
    .addColumn("target_snapshot_id", "text")
    .addColumn("active_snapshot_id", "text")
    /** What the agent last reported. */
    .addColumn("state", "text")
    .addColumn("last_seen_at", "timestamptz")
    .addColumn("agent_version", "text")
    .addColumn("node_red_version", "text")
    .addColumn("nodejs_version", "text")
    .addColumn("mode", "text", (c) => c.notNull().defaultTo("autonomous"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("devices_team_name")
    .on("devices")
    .columns(["team_id", "name", "id"])
    .execute();
  await db.schema
    .createIndex("devices_application_name")
    .on("devices")
    .columns(["application_id", "name", "id"])
    .execute();
  await db.schema.createIndex("devices_project").on("devices").column("project_id").execute();

  await db.schema
    .createTable("device_provisioning_tokens")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("digest", "text", (c) => c.notNull().unique())
    .addColumn("application_id", "text", (c) =>
      c.references("applications.id").onDelete("set null"),
    )
    .addColumn("project_id", "text", (c) => c.references("projects.id").onDelete("set null"))
    .addColumn("expires_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("device_provisioning_tokens_team")
    .on("device_provisioning_tokens")
    .columns(["team_id", "created_at", "id"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("device_provisioning_tokens").execute();
  await db.schema.dropTable("devices").execute();
}

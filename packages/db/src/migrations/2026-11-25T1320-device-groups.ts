// Device groups: named sets of an application's devices with a shared target snapshot and
// variables. A device belongs to at most one group; leaving it, it runs its own target again.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("device_groups")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("application_id", "text", (c) =>
      c.notNull().references("applications.id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("target_snapshot_id", "text", (c) =>
      c.references("snapshots.id").onDelete("set null"),
    )
    /** `{ env: [{ name, value, hidden }] }`: given to every member, under the member's own. */
    .addColumn("settings", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("device_groups_application_name")
    .on("device_groups")
    .columns(["application_id", "name", "id"])
    .execute();
  await db.schema
    .alterTable("devices")
    .addColumn("group_id", "text", (c) => c.references("device_groups.id").onDelete("set null"))
    .execute();
  await db.schema.createIndex("devices_group").on("devices").column("group_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("devices").dropColumn("group_id").execute();
  await db.schema.dropTable("device_groups").execute();
}

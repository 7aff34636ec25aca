// Snapshots (FlowFuse's ProjectSnapshots): what an instance — and next a device — ran at one
// moment: flows, credentials and hidden variables (encrypted, `secrets`), settings, variables and
// the modules its flows use. Owned by an instance now, by a device next: `owner_type` with one
// of `project_id` / `device_id` (the devices area adds the foreign key of `device_id`). The team
// and application are kept on the row, so a permission check or a "same application" check is
// one lookup by primary key. And the snapshot an instance's devices should run.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("snapshots")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("application_id", "text", (c) =>
      c.notNull().references("applications.id").onDelete("cascade"),
    )
    .addColumn("owner_type", "text", (c) => c.notNull())
    .addColumn("project_id", "text", (c) => c.references("projects.id").onDelete("cascade"))
    .addColumn("device_id", "text")
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("user_id", "text", (c) => c.references("users.id").onDelete("set null"))
    /** Node-RED's flow array. */
    .addColumn("flows", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    /** `{ settings, env: [{ name, value, hidden }] (hidden values blank), modules }` */
    .addColumn("settings", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    /**
     * `{ credentials, env }` (the flows' credentials, the hidden variables' values), encrypted in
     * Node-RED's format with a key derived from the platform's secret and the snapshot's id:
     * nothing in the database alone decrypts it. Null when there is nothing secret.
     */
    .addColumn("secrets", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      "snapshots_owner",
      sql`(owner_type = 'instance' and project_id is not null and device_id is null)
        or (owner_type = 'device' and device_id is not null and project_id is null)`,
    )
    .execute();
  // Lists are newest first, per owner.
  await db.schema
    .createIndex("snapshots_project")
    .on("snapshots")
    .columns(["project_id", "created_at desc", "id desc"])
    .where(sql.ref("project_id"), "is not", null)
    .execute();
  await db.schema
    .createIndex("snapshots_device")
    .on("snapshots")
    .columns(["device_id", "created_at desc", "id desc"])
    .where(sql.ref("device_id"), "is not", null)
    .execute();
  await db.schema
    .createIndex("snapshots_application")
    .on("snapshots")
    .columns(["application_id", "created_at desc", "id desc"])
    .execute();

  // The snapshot the instance's devices should run (POST /projects/{id}/devices/settings).
  await db.schema
    .alterTable("projects")
    .addColumn("device_target_snapshot_id", "text", (c) =>
      c.references("snapshots.id").onDelete("set null"),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("projects").dropColumn("device_target_snapshot_id").execute();
  await db.schema.dropTable("snapshots").execute();
}

// Rollouts: a snapshot sent to an application's devices wave by wave, each device gated on its
// health, rolled back past a budget of failures. A device in a rollout's wave runs the rollout's
// snapshot (`devices.rollout_snapshot_id`, over its group's, its instance's and its own target)
// until the rollout ends: succeeded, the snapshot becomes the target it would have followed anyway;
// rolled back, the override goes and it runs that target again.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("rollouts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("application_id", "text", (c) =>
      c.notNull().references("applications.id").onDelete("cascade"),
    )
    .addColumn("device_group_id", "text", (c) =>
      c.references("device_groups.id").onDelete("set null"),
    )
    /** Kept when the group is deleted: a group rollout's history still says which it was. */
    .addColumn("device_group_name", "text")
    .addColumn("snapshot_id", "text", (c) => c.references("snapshots.id").onDelete("set null"))
    .addColumn("snapshot_name", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    /** The waves as asked: `[{ count } | { percent }]`. */
    .addColumn("waves", "jsonb", (c) => c.notNull())
    .addColumn("soak_seconds", "integer", (c) => c.notNull())
    .addColumn("report_timeout_seconds", "integer", (c) => c.notNull())
    .addColumn("max_failures", "integer", (c) => c.notNull())
    .addColumn("require_approval", "boolean", (c) => c.notNull())
    .addColumn("start_at", "timestamptz")
    .addColumn("current_wave", "integer", (c) => c.notNull().defaultTo(0))
    /** When each wave started and finished: `[{ startedAt, finishedAt }]`, by index. */
    .addColumn("wave_times", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    /** The wave an owner approved last (-1: none). */
    .addColumn("approved_wave", "integer", (c) => c.notNull().defaultTo(-1))
    .addColumn("created_by", "text", (c) => c.references("users.id").onDelete("set null"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("finished_at", "timestamptz")
    .execute();
  await db.schema
    .createIndex("rollouts_application")
    .on("rollouts")
    .columns(["application_id", "created_at", "id"])
    .execute();
  await db.schema
    .createIndex("rollouts_group")
    .on("rollouts")
    .columns(["device_group_id", "created_at", "id"])
    .execute();
  await sql`create index rollouts_active on rollouts (state)
    where state in ('scheduled', 'running', 'paused', 'waiting_approval')`.execute(db);

  await db.schema
    .createTable("rollout_devices")
    .addColumn("rollout_id", "text", (c) =>
      c.notNull().references("rollouts.id").onDelete("cascade"),
    )
    .addColumn("device_id", "text", (c) => c.notNull().references("devices.id").onDelete("cascade"))
    .addColumn("wave", "integer", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull().defaultTo("pending"))
    .addColumn("reason", "text")
    /** What it ran when planned, by id and name (the snapshot may be gone since). */
    .addColumn("runs_id", "text")
    .addColumn("runs_name", "text")
    /** Its target before the rollout: what a rollback returns it to. */
    .addColumn("previous_id", "text")
    .addColumn("previous_name", "text")
    .addColumn("deployed_at", "timestamptz")
    .addColumn("soak_started_at", "timestamptz")
    .addColumn("healthy_at", "timestamptz")
    /** When it failed the gate (kept when it is rolled back after). */
    .addColumn("failed_at", "timestamptz")
    /** How often its flows reported starting since it was deployed (more than once: a restart). */
    .addColumn("starts", "integer", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("rollout_devices_pk", ["rollout_id", "device_id"])
    .execute();
  await db.schema
    .createIndex("rollout_devices_device")
    .on("rollout_devices")
    .column("device_id")
    .execute();

  await db.schema
    .alterTable("devices")
    .addColumn("rollout_snapshot_id", "text", (c) =>
      c.references("snapshots.id").onDelete("set null"),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("devices").dropColumn("rollout_snapshot_id").execute();
  await db.schema.dropTable("rollout_devices").execute();
  await db.schema.dropTable("rollouts").execute();
}

// Delivery pipelines: an application's pipelines, their stages as a singly linked list (each
// stage names the next), each stage's target, and the operations a deploy runs as.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("pipelines")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("application_id", "text", (c) =>
      c.notNull().references("applications.id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("pipelines_application")
    .on("pipelines")
    .columns(["application_id", "name"])
    .execute();
  await db.schema
    .createIndex("pipelines_team")
    .on("pipelines")
    .columns(["team_id", "name"])
    .execute();

  await db.schema
    .createTable("pipeline_stages")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("pipeline_id", "text", (c) =>
      c.notNull().references("pipelines.id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("action", "text", (c) => c.notNull().defaultTo("create_snapshot"))
    .addColumn("deploy_to_devices", "boolean", (c) => c.notNull().defaultTo(false))
    // The stage's target; an instance deleted leaves the stage without one.
    .addColumn("instance_id", "text", (c) => c.references("projects.id").onDelete("set null"))
    // The stage a deploy from this one goes to; unique, so the stages stay one list.
    .addColumn("next_stage_id", "text", (c) =>
      c.unique().references("pipeline_stages.id").onDelete("set null"),
    )
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex("pipeline_stages_pipeline")
    .on("pipeline_stages")
    .column("pipeline_id")
    .execute();
  await db.schema
    .createIndex("pipeline_stages_instance")
    .on("pipeline_stages")
    .column("instance_id")
    .execute();

  await db.schema
    .createTable("operations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
    .addColumn("error_code", "text")
    .addColumn("error_message", "text")
    // What the operation is about, as it was named when it started (the pipeline may go since).
    .addColumn("subject", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("user_id", "text", (c) => c.references("users.id").onDelete("set null"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("finished_at", "timestamptz")
    .execute();
  await db.schema
    .createIndex("operations_pending")
    .on("operations")
    .column("created_at")
    .where(sql.ref("status"), "=", "pending")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("operations").ifExists().execute();
  await db.schema.dropTable("pipeline_stages").ifExists().execute();
  await db.schema.dropTable("pipelines").ifExists().execute();
}

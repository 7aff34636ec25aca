// Pipeline stages that deploy to a device group or a device (FlowFuse's DEVICE_GROUP and DEVICE
// stage kinds): a stage names exactly one target; one deleted leaves the stage without it.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("pipeline_stages")
    .addColumn("device_group_id", "text", (c) =>
      c.references("device_groups.id").onDelete("set null"),
    )
    .execute();
  await db.schema
    .alterTable("pipeline_stages")
    .addColumn("device_id", "text", (c) => c.references("devices.id").onDelete("set null"))
    .execute();
  await db.schema
    .createIndex("pipeline_stages_device_group")
    .on("pipeline_stages")
    .column("device_group_id")
    .execute();
  await db.schema
    .createIndex("pipeline_stages_device")
    .on("pipeline_stages")
    .column("device_id")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("pipeline_stages").dropColumn("device_id").execute();
  await db.schema.alterTable("pipeline_stages").dropColumn("device_group_id").execute();
}

// Devices and snapshots together: a device's target is a snapshot (cleared when the snapshot goes),
// and a device's own snapshots go with the device.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("devices")
    .addForeignKeyConstraint("devices_target_snapshot", ["target_snapshot_id"], "snapshots", ["id"])
    .onDelete("set null")
    .execute();
  await db.schema
    .alterTable("snapshots")
    .addForeignKeyConstraint("snapshots_device", ["device_id"], "devices", ["id"])
    .onDelete("cascade")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("snapshots").dropConstraint("snapshots_device").execute();
  await db.schema.alterTable("devices").dropConstraint("devices_target_snapshot").execute();
}

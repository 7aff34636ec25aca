// The settings hash a device reports at check-in, beside the snapshot it reports: together they
// say what the device runs, which a snapshot of the device keeps.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("devices").addColumn("active_settings_hash", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("devices").dropColumn("active_settings_hash").execute();
}

// Platform events (issue 39): what the platform last announced of a device and of an instance, so
// that each change of state is told once, however many API processes share the database (each
// announcement is an update conditioned on the stored state differing, in the event's transaction).
// Devices: whether the platform last told them online (null: never), and the snapshot they last
// reported running; instances: when the runtime last reported a crash they have not recovered from.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("devices")
    .addColumn("online", "boolean")
    .addColumn("announced_snapshot_id", "text")
    .execute();
  // What the devices are now, as the API shows them: no device is announced on its next report for
  // a state it was already in.
  await sql`update devices set announced_snapshot_id = active_snapshot_id,
    online = case
      when last_seen_at is null then null
      when mqtt_connected is not null then mqtt_connected
      else last_seen_at > now() - interval '30 minutes'
    end`.execute(db);
  await db.schema.alterTable("projects").addColumn("crashed_at", "timestamptz").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("projects").dropColumn("crashed_at").execute();
  await db.schema
    .alterTable("devices")
    .dropColumn("online")
    .dropColumn("announced_snapshot_id")
    .execute();
}

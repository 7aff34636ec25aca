// A device registered from its own terminal (FlowFuse 2.33's `POST /api/v1/devices/_/register`):
// the agent is handed a page for a signed-in person to open and a URL to poll. Only digests of the
// two tokens are kept, for 30 minutes (FlowFuse's). The person's form creates the device; the
// poll that reads the finished registration deletes it and gives the device a new one-time code
// (only its digest kept, on the device, as for any code): no code is stored here.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("device_registrations")
    .addColumn("session_digest", "text", (c) => c.primaryKey())
    .addColumn("done_digest", "text", (c) => c.notNull().unique())
    // pending → claimed (a person's form is creating the device) → done (device and code kept).
    .addColumn("status", "text", (c) =>
      c
        .notNull()
        .defaultTo("pending")
        .check(sql`status in ('pending', 'claimed', 'done')`),
    )
    .addColumn("device_id", "text", (c) => c.references("devices.id").onDelete("cascade"))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    // The address the agent asked from, shown to the person who confirms.
    .addColumn("requested_from", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      "device_registrations_done",
      sql`(status = 'done') = (device_id is not null)`,
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("device_registrations").execute();
}

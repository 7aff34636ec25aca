// Devices live (issue 36): the MQTT channel between the platform and the agent. A device's broker
// password is kept as a digest, as its token is; whether it holds an MQTT session now (null: it
// never has, and its online status comes from its last check-in); the remote editor's tunnel token,
// a digest too, present while the tunnel is open.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("devices")
    .addColumn("broker_password_digest", "text")
    .addColumn("mqtt_connected", "boolean")
    .addColumn("editor_token_digest", "text")
    .execute();
  await db.schema
    .alterTable("devices")
    .addCheckConstraint("devices_mode", sql`mode in ('autonomous', 'developer')`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("devices").dropConstraint("devices_mode").execute();
  await db.schema
    .alterTable("devices")
    .dropColumn("broker_password_digest")
    .dropColumn("mqtt_connected")
    .dropColumn("editor_token_digest")
    .execute();
}

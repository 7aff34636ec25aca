// An instance's editor signs people in with a session of the platform's own, bound to that
// instance (`project_id`), instead of Node-RED's: so whatever ends a person's sessions (a password
// change, a suspension, the instance's deletion) ends their editor sessions too, and the platform
// decides every editor request with the role of the moment.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("sessions")
    .addColumn("project_id", "text", (c) => c.references("projects.id").onDelete("cascade"))
    .execute();
  await db.schema.createIndex("sessions_project_id").on("sessions").column("project_id").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db
    .deleteFrom("sessions" as never)
    .where("project_id" as never, "is not", null)
    .execute();
  await db.schema.alterTable("sessions").dropColumn("project_id").execute();
}

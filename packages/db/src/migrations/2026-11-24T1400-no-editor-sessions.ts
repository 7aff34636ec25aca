// Node-RED's editor sessions are bearer tokens: they stay in the Node-RED process and are never
// stored, so the column that was to keep them goes.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("project_storage").dropColumn("sessions").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("project_storage")
    .addColumn("sessions", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .execute();
}

// Opening an editor signs the person in on the platform's own page, which hands the editor a
// one-time authorization code (OAuth 2.0's authorization-code grant, as FlowFuse's editors use);
// the instance's Node-RED exchanges it, with its own token, for an editor session. Only a digest
// of the code is kept, for a minute, and an exchange deletes it. A script's token for one editor
// (POST /api/v1/projects/{id}/editor/token) is an editor session made from the person's own token:
// `scripted`, it is not refused while their password is expired, as their own token is not.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("editor_authorization_codes")
    .addColumn("digest", "text", (c) => c.primaryKey())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("project_id", "text", (c) =>
      c.notNull().references("projects.id").onDelete("cascade"),
    )
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .alterTable("sessions")
    .addColumn("scripted", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("sessions").dropColumn("scripted").execute();
  await db.schema.dropTable("editor_authorization_codes").execute();
}

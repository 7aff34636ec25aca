// The team library: flows, functions and templates a team's Node-RED instances share (FlowFuse's
// `shared-library`). One row per entry; a folder is the common prefix of its entries' paths.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("team_library_entries")
    .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
    // Node-RED's library type: `flows`, `functions`, `templates`, …
    .addColumn("type", "text", (c) => c.notNull())
    // The entry's path within its type (`folder/name`), compared byte-wise ("C") so that a
    // folder's entries are one range of the key.
    .addColumn("path", sql`text collate "C"`, (c) => c.notNull())
    .addColumn("meta", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("team_library_entries_pkey", ["team_id", "type", "path"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("team_library_entries").ifExists().execute();
}

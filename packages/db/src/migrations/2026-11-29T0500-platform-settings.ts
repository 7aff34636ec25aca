// The settings administrators change (PUT /api/v1/settings), one row per key, the value as JSON;
// a key with no row has its default.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("platform_settings")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("value", "jsonb", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("platform_settings").execute();
}

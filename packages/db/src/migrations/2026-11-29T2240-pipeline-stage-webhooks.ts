// A pipeline stage's webhook (issue 39): the team's hook that hears the outcome of every deploy
// into the stage, whatever types it subscribes to. Deleting the hook leaves the stage without one.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("pipeline_stages")
    .addColumn("webhook_id", "text", (c) => c.references("webhooks.id").onDelete("set null"))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("pipeline_stages").dropColumn("webhook_id").execute();
}

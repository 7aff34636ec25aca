// A deploy's operation names what it deploys to (`target`: `instance:<id>`, `group:<id>` or
// `device:<id>`), and at most one pending operation may name a target: a second concurrent deploy
// to the same device group or device is refused (409) instead of racing the first. `updated_at`
// is the running process's heartbeat, so that one left pending by a process that died can be
// found and failed.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("operations").addColumn("target", "text").execute();
  await db.schema
    .createIndex("operations_pending_target")
    .on("operations")
    .unique()
    .column("target")
    .where(sql.ref("status"), "=", "pending")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("operations_pending_target").ifExists().execute();
  await db.schema.alterTable("operations").dropColumn("target").execute();
}

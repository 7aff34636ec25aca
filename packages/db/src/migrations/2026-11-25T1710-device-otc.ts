// A device's one-time code lasts a day (as FlowFuse's): when it stops working. The code's digest
// (`otc_digest`) was there from the start; a code is issued with every new set of credentials.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("devices").addColumn("otc_expires_at", "timestamptz").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("devices").dropColumn("otc_expires_at").execute();
}

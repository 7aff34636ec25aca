// The address an audited request came from (issue 40): the socket's, or with TRUST_PROXY the
// client's as X-Forwarded-For's trusted hops give it. Null for what the platform did itself and
// for entries written before it was kept. Not copied into events: integrators get what changed,
// not where people sit.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("audit_log").addColumn("ip", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("audit_log").dropColumn("ip").execute();
}

// Idempotency keys (issue 40): a create sent again with the same `Idempotency-Key` by the same
// caller answers the first outcome, whichever API process gets it. One row per caller and key:
// the request's digest (a different request with the same key is refused), and once the create
// has answered, its status and body (null while it runs). Kept 24 hours, then swept.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("idempotency_keys")
    .addColumn("caller", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("request_digest", "text", (c) => c.notNull())
    .addColumn("status", "integer")
    .addColumn("body", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pkey", ["caller", "key"])
    .execute();
  await db.schema
    .createIndex("idempotency_keys_expires_at")
    .on("idempotency_keys")
    .column("expires_at")
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("idempotency_keys").execute();
}

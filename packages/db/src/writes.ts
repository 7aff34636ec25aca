// Writes that don't collide (issue 40): the versions behind the ETags of the resources a client
// reads and writes back, and the outcomes of creates kept under their `Idempotency-Key`.
import type { Kysely } from "kysely";
import type { Database } from "./schema";

/** The tables whose rows carry a `version` (migration resource-versions). */
export type VersionedTable = "teams" | "applications" | "projects" | "devices" | "device_groups";

/**
 * The row's version, its row locked until the transaction ends (`for update`): a precondition
 * compared with it holds until the update commits, so two writers holding the same ETag cannot
 * both pass. Undefined when there is no such row.
 */
export async function lockVersion(
  db: Kysely<Database>,
  table: VersionedTable,
  id: string,
): Promise<number | undefined> {
  const row = await db
    .selectFrom(table)
    .select("version")
    .where("id", "=", id)
    .forUpdate()
    .executeTakeFirst();
  return row?.version;
}

export interface IdempotencyOutcome {
  requestDigest: string;
  /** Null while the first request runs. */
  status: number | null;
  body: string | null;
  createdAt: Date;
}

/**
 * Claims the key for a request: the claim (its `createdAt`, which settling and releasing compare
 * so that they only ever touch their own claim) when this request is the first (the row is
 * inserted, with no outcome yet), undefined when another holds it (read it with
 * `findIdempotencyKey`). Only a row past its expiry is taken over: a pending row may stand for a
 * create that committed before its process died, which must not run twice.
 */
export async function claimIdempotencyKey(
  db: Kysely<Database>,
  claim: {
    caller: string;
    key: string;
    requestDigest: string;
    now: Date;
    expiresAt: Date;
  },
): Promise<IdempotencyClaim | undefined> {
  const row = await db
    .insertInto("idempotency_keys")
    .values({
      caller: claim.caller,
      key: claim.key,
      request_digest: claim.requestDigest,
      status: null,
      body: null,
      created_at: claim.now,
      expires_at: claim.expiresAt,
    })
    .onConflict((oc) =>
      oc
        .columns(["caller", "key"])
        .doUpdateSet({
          request_digest: (eb) => eb.ref("excluded.request_digest"),
          status: null,
          body: null,
          created_at: (eb) => eb.ref("excluded.created_at"),
          expires_at: (eb) => eb.ref("excluded.expires_at"),
        })
        .where("idempotency_keys.expires_at", "<=", claim.now),
    )
    .returning("created_at")
    .executeTakeFirst();
  return row && { caller: claim.caller, key: claim.key, createdAt: row.created_at };
}

/** A claimed key: its row, as long as it is still this claim's (same `created_at`). */
export interface IdempotencyClaim {
  caller: string;
  key: string;
  createdAt: Date;
}

export async function findIdempotencyKey(
  db: Kysely<Database>,
  caller: string,
  key: string,
): Promise<IdempotencyOutcome | undefined> {
  const row = await db
    .selectFrom("idempotency_keys")
    .select(["request_digest", "status", "body", "created_at"])
    .where("caller", "=", caller)
    .where("key", "=", key)
    .executeTakeFirst();
  return (
    row && {
      requestDigest: row.request_digest,
      status: row.status,
      body: row.body,
      createdAt: row.created_at,
    }
  );
}

/** The first request's outcome, answered to every retry until the row expires. */
export async function settleIdempotencyKey(
  db: Kysely<Database>,
  claim: IdempotencyClaim,
  outcome: { status: number; body: string | null },
): Promise<void> {
  await db
    .updateTable("idempotency_keys")
    .set({ status: outcome.status, body: outcome.body })
    .where("caller", "=", claim.caller)
    .where("key", "=", claim.key)
    .where("created_at", "=", claim.createdAt)
    .where("status", "is", null)
    .execute();
}

/** The key given back: the request failed, and a retry runs it again. Only this claim's row. */
export async function releaseIdempotencyKey(
  db: Kysely<Database>,
  claim: IdempotencyClaim,
): Promise<void> {
  await db
    .deleteFrom("idempotency_keys")
    .where("caller", "=", claim.caller)
    .where("key", "=", claim.key)
    .where("created_at", "=", claim.createdAt)
    .where("status", "is", null)
    .execute();
}

/** Housekeeping: the keys past their expiry. */
export async function deleteExpiredIdempotencyKeys(
  db: Kysely<Database>,
  now: Date,
): Promise<number> {
  const result = await db
    .deleteFrom("idempotency_keys")
    .where("expires_at", "<=", now)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

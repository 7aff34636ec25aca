// Writes that don't collide (issue 40), for the REST routes (core/rest.ts):
// - ETags and `If-Match`. A resource whose meta says `etag` (a team, an application, an
//   instance, a device, a device group) has a `version` on its row, bumped by a trigger on every
//   update that changes what a client could overwrite (migration resource-versions): its GET
//   answers it as `ETag: "<version>"`, and its PUT, PATCH and DELETE take `If-Match`, compared by
//   the procedure in its own transaction with the row locked (`checkIfMatch`), so that of two
//   writers holding the same ETag one wins and the other gets 412 `precondition_failed`.
// - `Idempotency-Key` on creates (meta `create`): the first outcome under a caller's key is kept
//   24 hours in `idempotency_keys` (shared by every API process) and answered again to a retry,
//   once the retry's caller is authorized (the `keyed` middleware, core/trpc.ts).
import { createHmac } from "node:crypto";
import {
  claimIdempotencyKey,
  type Db,
  findIdempotencyKey,
  type IdempotencyClaim,
  lockVersion,
  releaseIdempotencyKey,
  settleIdempotencyKey,
  type VersionedTable,
} from "@flowplane/db";
import type { FastifyRequest } from "fastify";
import { ApiError } from "./errors";
import type { Context, Meta } from "./trpc";

/** What a REST request says about preconditions, and the ETag its reply carries. */
export interface HttpExchange {
  /** The `If-Match` header: its strong ETags, or `*` (any current representation). */
  ifMatch?: readonly string[] | "*";
  /** Set by the procedure: the resource's ETag, sent as the `ETag` header. */
  etag?: string;
  /**
   * A keyed create's idempotency step (core/rest.ts), run by the `keyed` middleware once the
   * caller is authorized (core/trpc.ts), so that a replay is never answered to a caller who may
   * no longer make the request.
   */
  beforeCreate?: () => Promise<void>;
}

declare module "./trpc" {
  interface Context {
    /** REST requests only (core/rest.ts): preconditions in, the ETag out. */
    http?: HttpExchange;
  }
}

/** A version as its ETag: strong (`If-Match` compares strongly), opaque to clients. */
export const etagOf = (version: number) => `"${version}"`;

/** The resource's ETag on the reply (a GET whose meta says `etag`). */
export function setETag(ctx: Context, version: number): void {
  if (ctx.http) ctx.http.etag = etagOf(version);
}

/** The ETag after a change whose row the procedure does not read back (REST requests only). */
export async function setETagOf(
  db: Db,
  ctx: Context,
  table: VersionedTable,
  id: string,
): Promise<void> {
  if (!ctx.http) return;
  const version = await lockVersion(db, table, id);
  if (version !== undefined) setETag(ctx, version);
}

/**
 * The header's ETags. Weak ones (`W/"…"`) never match: `If-Match` compares strongly (RFC 9110
 * 13.1.1). Undefined without the header: the write goes ahead unconditionally.
 */
export function parseIfMatch(header: string | string[] | undefined): HttpExchange["ifMatch"] {
  if (header === undefined) return undefined;
  const values = (Array.isArray(header) ? header : [header])
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter((value) => value !== "");
  if (values.includes("*")) return "*";
  return values.filter((value) => value.startsWith('"') && value.endsWith('"'));
}

export const preconditionFailed = () =>
  new ApiError(
    412,
    "precondition_failed",
    "The resource changed since it was read (If-Match does not match its ETag): read it again",
  );

/**
 * The request's `If-Match`, if any, against the resource's version, inside the write's
 * transaction: the row stays locked until the transaction ends, so the precondition still holds
 * when the update commits. No such row: nothing to compare (the write answers its own 404).
 */
export async function checkIfMatch(
  db: Db,
  ctx: Context,
  table: VersionedTable,
  id: string,
): Promise<void> {
  const ifMatch = ctx.http?.ifMatch;
  if (ifMatch === undefined) return;
  const version = await lockVersion(db, table, id);
  if (version === undefined || ifMatch === "*") return;
  if (!ifMatch.includes(etagOf(version))) throw preconditionFailed();
}

export const IDEMPOTENCY_KEY_MAX = 255;
/** How long an outcome is answered again. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A first request still unsettled after this is taken as ended without an outcome (its process
 * or its database stopped): its create may have committed, so the key is never run again, and a
 * retry is told the outcome is unknown rather than that it is still running.
 */
export const IDEMPOTENCY_UNSETTLED_MS = 10 * 60 * 1000;

/** The header's value, if the route takes it; 400 when it is malformed or refused. */
export function idempotencyKeyOf(
  create: Meta["create"],
  request: FastifyRequest,
): string | undefined {
  const header = request.headers["idempotency-key"];
  if (header === undefined) return undefined;
  if (Array.isArray(header) || header.length === 0 || header.length > IDEMPOTENCY_KEY_MAX) {
    throw new ApiError(
      400,
      "invalid_request",
      `Idempotency-Key: one value of 1 to ${IDEMPOTENCY_KEY_MAX} characters`,
      [{ path: "Idempotency-Key", message: `1 to ${IDEMPOTENCY_KEY_MAX} characters` }],
    );
  }
  if (create === "secret") {
    throw new ApiError(
      400,
      "idempotency_unsupported",
      "Idempotency-Key is not accepted here: the answer carries a secret shown once, which the platform does not keep to answer it again",
    );
  }
  return header;
}

/** Whose keys: a person's (token or session), or a provisioning token's. */
function callerOf(ctx: Context): string | undefined {
  if (ctx.auth.provisioning) return `provisioning:${ctx.auth.provisioning.tokenId}`;
  if (ctx.auth.otc) return undefined;
  return `user:${ctx.auth.userId}`;
}

export interface Outcome {
  status: number;
  /** The JSON body as sent; null: none (204). */
  body: string | null;
}

/** What the idempotency step decided: run the create under this claim, or answer a replay. */
export type Keyed = { claim?: IdempotencyClaim } | { replay: Outcome };

/**
 * A create under its key, before it runs (after its authorization): the first request claims
 * the key (then `keepOutcome` or `giveBack`); a retry gets the kept outcome (`replay`). Another
 * request under the same key is 422 `idempotency_key_reused`; one while the first still runs,
 * 409 `idempotency_in_progress`; one after the first ended without an outcome (10 minutes
 * unsettled), 409 `idempotency_outcome_unknown` until the key expires — its create may have
 * committed, so it is never run again under that key. No caller to key by: no claim.
 */
export async function claimOrReplay(
  db: Db,
  ctx: Context,
  key: string,
  request: FastifyRequest,
): Promise<Keyed> {
  const caller = callerOf(ctx);
  if (caller === undefined) return {};
  // Keyed with the platform's secret: a body may hold a password, whose plain digest could be
  // guessed offline.
  const requestDigest = createHmac("sha256", ctx.tokenSecret)
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest("hex");
  const now = new Date();
  const claim = await claimIdempotencyKey(db, {
    caller,
    key,
    requestDigest,
    now,
    expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
  });
  if (claim) return { claim };
  const kept = await findIdempotencyKey(db, caller, key);
  // Released between the claim and this read: the first failed; this one may run it again.
  if (!kept) return claimOrReplay(db, ctx, key, request);
  if (kept.requestDigest !== requestDigest) {
    throw new ApiError(
      422,
      "idempotency_key_reused",
      "This Idempotency-Key was used for another request: use a new key for a new request",
    );
  }
  if (kept.status === null) {
    if (now.getTime() - kept.createdAt.getTime() > IDEMPOTENCY_UNSETTLED_MS) {
      throw new ApiError(
        409,
        "idempotency_outcome_unknown",
        "The first request with this Idempotency-Key did not finish; its outcome is unknown: check whether it created the resource, then use a new key",
      );
    }
    throw new ApiError(
      409,
      "idempotency_in_progress",
      "A request with this Idempotency-Key is still running: retry once it has answered",
    );
  }
  return { replay: { status: kept.status, body: kept.body } };
}

/**
 * The create committed: its outcome kept for retries. Not kept (the database went away): logged,
 * and the caller still gets the create's answer (a retry then gets 409
 * `idempotency_outcome_unknown`, never a second create).
 */
export async function keepOutcome(
  db: Db,
  request: FastifyRequest,
  claim: IdempotencyClaim,
  outcome: Outcome,
): Promise<void> {
  await settleIdempotencyKey(db, claim, outcome).catch((error: unknown) =>
    request.log.error({ err: error }, "idempotency outcome not kept"),
  );
}

/**
 * The create failed: the key given back, so a retry runs it again. Not given back: logged (a
 * retry gets 409 until the key expires), and the caller still gets the original error.
 */
export async function giveBack(
  db: Db,
  request: FastifyRequest,
  claim: IdempotencyClaim,
): Promise<void> {
  await releaseIdempotencyKey(db, claim).catch((error: unknown) =>
    request.log.error({ err: error }, "idempotency key not released"),
  );
}

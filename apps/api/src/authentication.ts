// Authentication of every request under /api/ and /trpc/: shape and checksum first (no database),
// then one indexed lookup of the digest. Expired tokens are refused and deleted on the spot.
// lastUsedAt is recorded in memory and written in batches, never once per request.
//
// Digests found unknown are remembered (a bounded LRU), so a client hammering with a revoked or
// made-up token costs no query. This cannot delay a revocation or hide a new token: values are
// random and created here, so a digest unknown once is never valid later.
import { bearerToken, parseToken, tokenDigest } from "@flowplane/auth";
import {
  type Db,
  deleteToken,
  findTokenByDigest,
  type TokenIdentity,
  touchTokens,
} from "@flowplane/db";
import { LRUCache } from "lru-cache";
import { unauthorized } from "./errors";

export class Authenticator {
  private lastUsed = new Map<string, Date>();
  private readonly unknown = new LRUCache<string, true>({ max: 10_000 });

  constructor(
    private readonly db: Db,
    private readonly secret: string,
  ) {}

  async authenticate(header: string | undefined): Promise<TokenIdentity> {
    const token = bearerToken(header);
    if (!token || !parseToken(token)) throw unauthorized();
    const digest = tokenDigest(this.secret, token);
    if (this.unknown.has(digest)) throw unauthorized();
    const identity = await findTokenByDigest(this.db, digest);
    if (!identity) {
      this.unknown.set(digest, true);
      throw unauthorized();
    }
    const now = new Date();
    if (identity.scope.expiresAt && identity.scope.expiresAt <= now) {
      await deleteToken(this.db, identity.id);
      this.unknown.set(digest, true);
      throw unauthorized();
    }
    this.lastUsed.set(identity.id, now);
    return identity;
  }

  /** Writes the lastUsedAt times gathered since the previous flush. */
  async flushUsage(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = this.lastUsed;
    this.lastUsed = new Map();
    await touchTokens(this.db, batch);
  }
}

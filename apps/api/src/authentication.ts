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
  findTokenAndTeam,
  findTokenByDigest,
  type TeamForUser,
  type TokenIdentity,
  touchTokens,
} from "@flowplane/db";
import { LRUCache } from "lru-cache";

export interface Authenticated {
  identity: TokenIdentity;
  /** The team a team route names, looked up with the token (found: undefined when none). */
  team?: PreloadedTeam;
}

export interface PreloadedTeam {
  teamId: string;
  found: TeamForUser | undefined;
}

export class Authenticator {
  private lastUsed = new Map<string, Date>();
  private readonly unknown = new LRUCache<string, true>({ max: 10_000 });

  constructor(
    private readonly db: Db,
    private readonly secret: string,
  ) {}

  /**
   * The token's identity, or undefined when the request is not authenticated (no throw: a 401 is
   * the common case under attack or misconfiguration, and should cost little). With `teamId` (a
   * team route), the team and the owner's membership come back from the same query, so
   * authorization needs no second round trip.
   */
  async authenticate(
    header: string | undefined,
    teamId?: string,
  ): Promise<Authenticated | undefined> {
    const token = bearerToken(header);
    if (!token || !parseToken(token)) return undefined;
    const digest = tokenDigest(this.secret, token);
    if (this.unknown.has(digest)) return undefined;
    const found =
      teamId === undefined
        ? await findTokenByDigest(this.db, digest).then((identity) => identity && { identity })
        : await findTokenAndTeam(this.db, digest, teamId).then(
            (result) =>
              result && { identity: result.identity, team: { teamId, found: result.team } },
          );
    if (!found) {
      this.unknown.set(digest, true);
      return undefined;
    }
    const now = new Date();
    const { expiresAt } = found.identity.scope;
    if (expiresAt && expiresAt <= now) {
      await deleteToken(this.db, found.identity.id);
      this.unknown.set(digest, true);
      return undefined;
    }
    this.lastUsed.set(found.identity.id, now);
    return found;
  }

  /** Writes the lastUsedAt times gathered since the previous flush. */
  async flushUsage(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = this.lastUsed;
    this.lastUsed = new Map();
    await touchTokens(this.db, batch);
  }
}

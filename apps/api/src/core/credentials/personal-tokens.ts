// Personal access tokens (`fpp_…`, bearer): shape and checksum first (no database), then one
// indexed lookup of the digest. Expired tokens are refused and deleted on the spot; a suspended
// owner's tokens fail while the suspension lasts. lastUsedAt is recorded in memory and written in
// batches, never once per request.
//
// What a token's query answered (its owner and scope, and the team or teams the route preloads) is
// kept too, on PostgreSQL, and used again only after a barrier of the database's access feed
// (@flowplane/db access-changes.ts): every change committed before the request arrived, in this
// process or another, has then been heard, and any change empties what was kept. So a revocation,
// a suspension, a role change or a removal holds on the very next request, whichever process
// serves it; while the feed is down nothing kept is used. A barrier is one trivial statement
// shared by the requests that arrive while the previous one is out: the reads it replaces cost the
// database a join and the server the rows' parsing, every request.
import { bearerToken, parseToken, tokenDigest } from "@flowplane/auth";
import {
  type AccessFeed,
  accessFeed,
  deleteToken,
  findTokenAndTeam,
  findTokenAndUserTeams,
  findTokenByDigest,
  type TokenIdentity,
  touchTokens,
} from "@flowplane/db";
import type { Authenticated, AuthenticateOptions, CredentialStore } from "./identity";

/**
 * How much is kept at most, in answers and in their weight (an answer, plus a row for each team
 * of a user's teams): a user in many teams with many tokens must not fill a small machine.
 */
const MAX_KEPT = 10_000;
const MAX_KEPT_WEIGHT = 50_000;

type TokenFound = Omit<Authenticated, "identity"> & { identity: TokenIdentity };

interface Kept {
  found: TokenFound;
  /** The feed's generation when the query that found it was sent. */
  generation: number;
}

export class PersonalTokens {
  private lastUsed = new Map<string, Date>();
  /** The database's access feed; undefined on PGlite (nothing is kept there). */
  readonly feed: AccessFeed | undefined;
  /** Emptied by replacing it (O(1): an LRU's clear walks its whole capacity, every change). */
  private kept = new Map<string, Kept>();
  private keptWeight = 0;
  /** How often a token's request used what was kept, and how often it asked the database. */
  readonly counts = { kept: 0, queried: 0 };

  constructor(
    private readonly store: CredentialStore,
    onFeedError?: (error: Error) => void,
  ) {
    this.feed = accessFeed(store.db, onFeedError);
    this.feed?.onChange(() => {
      if (this.kept.size > 0) this.forget();
    });
  }

  /**
   * The token's owner, or undefined. With `teamId` (a team route), the team and the owner's
   * membership come back from the same query, so authorization needs no second round trip;
   * likewise every team of the owner with `withUserTeams` (and no `teamId`).
   */
  async authenticate(
    header: string | undefined,
    { teamId, withUserTeams = false, reading = false }: AuthenticateOptions,
  ): Promise<Authenticated | undefined> {
    const token = bearerToken(header);
    if (!token || parseToken(token) !== "personalAccessToken") return undefined;
    const digest = tokenDigest(this.store.secret, token);
    if (this.store.unknown.has(digest)) return undefined;
    const found = await this.findToken(digest, teamId, withUserTeams, reading);
    if (!found) {
      this.store.unknown.set(digest, true);
      return undefined;
    }
    if (found.identity.suspended) return undefined;
    const now = new Date();
    const { expiresAt } = found.identity.scope;
    if (expiresAt && expiresAt <= now) {
      await deleteToken(this.store.db, found.identity.id);
      this.store.unknown.set(digest, true);
      return undefined;
    }
    this.lastUsed.set(found.identity.id, now);
    const { id, userId, username, admin, scope } = found.identity;
    return {
      identity: {
        kind: "token",
        id,
        tokenId: id,
        userId,
        username,
        admin,
        scope,
        passwordExpired: false,
      },
      team: found.team,
      userTeams: found.userTeams,
    };
  }

  private forget(): void {
    this.kept = new Map();
    this.keptWeight = 0;
  }

  /** The token's query, or what it answered before when nothing has changed since (see above). */
  private async findToken(
    digest: string,
    teamId: string | undefined,
    withUserTeams: boolean,
    reading: boolean,
  ): Promise<TokenFound | undefined> {
    const feed = reading ? this.feed : undefined;
    const key =
      teamId !== undefined ? `${digest} ${teamId}` : withUserTeams ? `${digest} *` : digest;
    const kept = feed && this.kept.get(key);
    if (kept && (await feed.barrier()) && kept.generation === feed.generation) {
      this.counts.kept++;
      return kept.found;
    }
    this.counts.queried++;
    const generation = feed?.generation;
    const { db } = this.store;
    const found: TokenFound | undefined =
      teamId !== undefined
        ? await findTokenAndTeam(db, digest, teamId).then(
            (result) =>
              result && { identity: result.identity, team: { teamId, found: result.team } },
          )
        : withUserTeams
          ? await findTokenAndUserTeams(db, digest).then(
              (result) => result && { identity: result.identity, userTeams: result.teams },
            )
          : await findTokenByDigest(db, digest).then((identity) => identity && { identity });
    // Kept only when the feed listened from before the query to its answer with no change heard:
    // a change committed while the query ran is heard later, and empties what is kept then.
    if (found && feed?.live && feed.generation === generation) {
      // Bounded: when full, start again (a change empties it anyway).
      const weight = 1 + (found.userTeams?.length ?? 0);
      if (this.kept.size >= MAX_KEPT || this.keptWeight + weight > MAX_KEPT_WEIGHT) this.forget();
      this.keptWeight += weight;
      this.kept.set(key, { found: deepFreeze(found), generation: feed.generation });
    }
    return found;
  }

  /** Writes the lastUsedAt times gathered since the previous flush. */
  async flushUsage(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = this.lastUsed;
    this.lastUsed = new Map();
    await touchTokens(this.store.db, batch);
  }
}

/** Frozen through and through: what is kept is shared by the requests that use it. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

// Who is calling, for every request under /api/ and /trpc/ (plugins/authentication.ts) and for the
// pages: a bearer token, or (under /api/) the session cookie of a signed-in browser. Shape and
// checksum first (no database), then one indexed lookup of the digest. Expired tokens are refused
// and deleted on the spot; a suspended owner's tokens and sessions fail while the suspension
// lasts. lastUsedAt is recorded in memory and written in batches, never once per request; a
// session's last activity at most once a minute.
//
// Digests found unknown are remembered (a bounded LRU), so a client hammering with a revoked or
// made-up token costs no query. This cannot delay a revocation or hide a new token: values are
// random and created here, so a digest unknown once is never valid later. (A suspended user's
// token is not unknown, and is not remembered as such.)
//
// What a token's query answered (its owner and scope, and the team or teams the route preloads) is
// kept too, on PostgreSQL, and used again only after a barrier of the database's access feed
// (@flowplane/db access-changes.ts): every change committed before the request arrived, in this
// process or another, has then been heard, and any change empties what was kept. So a revocation,
// a suspension, a role change or a removal holds on the very next request, whichever process
// serves it; while the feed is down nothing kept is used. A barrier is one trivial statement
// shared by the requests that arrive while the previous one is out: the reads it replaces cost the
// database a join and the server the rows' parsing, every request.
import {
  bearerToken,
  type Caller,
  oneTimeCodeFromBearer,
  parseToken,
  tokenDigest,
} from "@flowplane/auth";
import {
  type AccessFeed,
  accessFeed,
  type Db,
  deleteSession,
  deleteToken,
  type EditorSessionIdentity,
  findEditorSession,
  findSessionByDigest,
  findTokenAndTeam,
  findProvisioningTokenByDigest,
  findTokenAndUserTeams,
  findTokenByDigest,
  type TeamForUser,
  touchSession,
  type TokenIdentity,
  touchTokens,
  type UserTeamRow,
} from "@flowplane/db";
import { LRUCache } from "lru-cache";

/** Who is calling: a token's owner narrowed by its scope, or a signed-in user (no scope limits). */
export interface Identity extends Caller {
  kind: "token" | "session" | "provisioning" | "otc";
  /** The token's or the session's id. */
  id: string;
  /** The token used; null in a signed-in browser. */
  tokenId: string | null;
  username: string;
  /** Sessions only: the user must choose a new password before anything else. */
  passwordExpired: boolean;
  /** A team's provisioning token (no user): it may create devices in its team, nothing else. */
  provisioning?: ProvisioningIdentity;
  /**
   * A device's one-time code (no user): it may set up its device (POST /api/v1/devices with
   * `setup: true`), once, nothing else. Its digest; whether it is a live code, the setup decides.
   */
  otc?: { digest: string };
}

export interface ProvisioningIdentity {
  tokenId: string;
  name: string;
  teamId: string;
  applicationId: string | null;
  projectId: string | null;
}

export interface Authenticated {
  identity: Identity;
  /** The team a team route names, looked up with the token (found: undefined when none). */
  team?: PreloadedTeam;
  /** Every team of the token's owner, when asked for (`withUserTeams`). */
  userTeams?: UserTeamRow[];
}

export interface PreloadedTeam {
  teamId: string;
  found: TeamForUser | undefined;
}

export interface SessionLifetime {
  /** Fixed maximum age of a session from sign-in. */
  maxAgeMs: number;
  /** A session unused this long ends. */
  idleMs: number;
}

/**
 * How much is kept at most, in answers and in their weight (an answer, plus a row for each team
 * of a user's teams): a user in many teams with many tokens must not fill a small machine.
 */
const MAX_KEPT = 10_000;
const MAX_KEPT_WEIGHT = 50_000;

export interface AuthenticateOptions {
  /** A team route's team, looked up with the token. */
  teamId?: string;
  /** The session cookie's value, used when there is no `Authorization` header. */
  sessionCookie?: string;
  /** Every team of the token's owner, looked up with the token. */
  withUserTeams?: boolean;
  /**
   * A read (GET, HEAD): may use what an earlier request's query answered. A write asks the
   * database: its own statements cost a round trip anyway, and it changes what is kept.
   */
  reading?: boolean;
}

/** How often a session's last activity is written at most (the idle timeout's resolution). */
const TOUCH_INTERVAL_MS = 60_000;

type TokenFound = Omit<Authenticated, "identity"> & { identity: TokenIdentity };

interface Kept {
  found: TokenFound;
  /** The feed's generation when the query that found it was sent. */
  generation: number;
}

export class Authenticator {
  private lastUsed = new Map<string, Date>();
  private readonly unknown = new LRUCache<string, true>({ max: 10_000 });
  /** The database's access feed; undefined on PGlite (nothing is kept there). */
  readonly feed: AccessFeed | undefined;
  /** Emptied by replacing it (O(1): an LRU's clear walks its whole capacity, every change). */
  private kept = new Map<string, Kept>();
  private keptWeight = 0;
  /** How often a token's request used what was kept, and how often it asked the database. */
  readonly counts = { kept: 0, queried: 0 };

  constructor(
    private readonly db: Db,
    private readonly secret: string,
    private readonly sessions: SessionLifetime,
    onFeedError?: (error: Error) => void,
  ) {
    this.feed = accessFeed(db, onFeedError);
    this.feed?.onChange(() => {
      if (this.kept.size > 0) this.forget();
    });
  }

  /** Resolves when what token queries answer can be kept (at once on PGlite, which keeps none). */
  ready(): Promise<void> {
    return this.feed?.ready() ?? Promise.resolve();
  }

  /** Stops listening for changes (the close of the app). */
  async close(): Promise<void> {
    await this.feed?.close();
  }

  /**
   * The caller's identity, or undefined when the request is not authenticated (no throw: a 401 is
   * the common case under attack or misconfiguration, and should cost little). A bearer token
   * wins over a session cookie. With `teamId` (a team route) and a token, the team and the
   * owner's membership come back from the same query, so authorization needs no second round trip;
   * likewise every team of the owner with `withUserTeams` (and no `teamId`).
   */
  async authenticate(
    header: string | undefined,
    { teamId, sessionCookie, withUserTeams = false, reading = false }: AuthenticateOptions = {},
  ): Promise<Authenticated | undefined> {
    if (header === undefined && sessionCookie !== undefined) {
      return this.authenticateSession(sessionCookie);
    }
    const token = bearerToken(header);
    if (!token || parseToken(token) !== "personalAccessToken") return undefined;
    const digest = tokenDigest(this.secret, token);
    if (this.unknown.has(digest)) return undefined;
    const found = await this.findToken(digest, teamId, withUserTeams, reading);
    if (!found) {
      this.unknown.set(digest, true);
      return undefined;
    }
    if (found.identity.suspended) return undefined;
    const now = new Date();
    const { expiresAt } = found.identity.scope;
    if (expiresAt && expiresAt <= now) {
      await deleteToken(this.db, found.identity.id);
      this.unknown.set(digest, true);
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
    const found: TokenFound | undefined =
      teamId !== undefined
        ? await findTokenAndTeam(this.db, digest, teamId).then(
            (result) =>
              result && { identity: result.identity, team: { teamId, found: result.team } },
          )
        : withUserTeams
          ? await findTokenAndUserTeams(this.db, digest).then(
              (result) => result && { identity: result.identity, userTeams: result.teams },
            )
          : await findTokenByDigest(this.db, digest).then((identity) => identity && { identity });
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

  /**
   * A person's session in an instance's editor (`fpe_…`, made by the editor's sign-in), with
   * their role of the moment in the instance's team; undefined when it is not this instance's,
   * has ended, or its user is suspended. It follows the lifetime rules of browser sessions.
   */
  async authenticateEditor(
    value: string,
    projectId: string,
    /** false: a check that the session still holds, not a use of it (its idle time runs on). */
    activity = true,
  ): Promise<EditorSessionIdentity | undefined> {
    if (parseToken(value) !== "editorSession") return undefined;
    const digest = tokenDigest(this.secret, value);
    if (this.unknown.has(digest)) return undefined;
    const session = await findEditorSession(this.db, digest, projectId);
    // Not remembered as unknown: another instance's session is valid there.
    if (!session) return undefined;
    return (await this.live(session, digest, activity)) ? session : undefined;
  }

  /** Whether a session found by its digest still holds: ended ones are deleted here. */
  private async live(
    session: { id: string; suspended: boolean; expiresAt: Date; lastSeenAt: Date },
    digest: string,
    activity = true,
  ): Promise<boolean> {
    if (session.suspended) return false;
    const now = Date.now();
    if (
      session.expiresAt.getTime() <= now ||
      session.lastSeenAt.getTime() + this.sessions.idleMs <= now
    ) {
      await deleteSession(this.db, session.id);
      this.unknown.set(digest, true);
      return false;
    }
    if (
      activity &&
      now - session.lastSeenAt.getTime() >= Math.min(TOUCH_INTERVAL_MS, this.sessions.idleMs / 10)
    ) {
      await touchSession(this.db, session.id, new Date(now));
    }
    return true;
  }

  /**
   * A provisioning token (`fpv_…`), only where the caller accepts one (POST /api/v1/devices). An
   * expired one is refused (and kept: its owners see it expired in their list).
   */
  async authenticateProvisioning(header: string | undefined): Promise<Identity | undefined> {
    const token = bearerToken(header);
    if (!token || parseToken(token) !== "provisioning") return undefined;
    const digest = tokenDigest(this.secret, token);
    if (this.unknown.has(digest)) return undefined;
    const row = await findProvisioningTokenByDigest(this.db, digest);
    if (!row) {
      this.unknown.set(digest, true);
      return undefined;
    }
    if (row.expires_at && row.expires_at.getTime() <= Date.now()) return undefined;
    return {
      kind: "provisioning",
      id: row.id,
      tokenId: null,
      userId: "",
      username: `provisioning:${row.name}`,
      admin: false,
      scope: {
        readOnly: false,
        adminOptIn: false,
        teamIds: [row.team_id],
        expiresAt: row.expires_at,
      },
      passwordExpired: false,
      provisioning: {
        tokenId: row.id,
        name: row.name,
        teamId: row.team_id,
        applicationId: row.application_id,
        projectId: row.project_id,
      },
    };
  }

  /**
   * A device's one-time code as the agent sends it (the base64 of the code), only where the
   * caller accepts one (POST /api/v1/devices). Only its shape is checked here: the setup uses it
   * up in the same statement that finds it, so that two uses cannot both succeed.
   */
  authenticateOtc(header: string | undefined): Identity | undefined {
    const code = oneTimeCodeFromBearer(header);
    if (code === undefined) return undefined;
    const digest = tokenDigest(this.secret, code);
    return {
      kind: "otc",
      id: digest,
      tokenId: null,
      userId: "",
      username: "device-setup",
      admin: false,
      scope: { readOnly: false, adminOptIn: false, teamIds: [], expiresAt: null },
      passwordExpired: false,
      otc: { digest },
    };
  }

  private async authenticateSession(value: string): Promise<Authenticated | undefined> {
    if (parseToken(value) !== "session") return undefined;
    const digest = tokenDigest(this.secret, value);
    if (this.unknown.has(digest)) return undefined;
    const session = await findSessionByDigest(this.db, digest);
    if (!session) {
      this.unknown.set(digest, true);
      return undefined;
    }
    if (!(await this.live(session, digest))) return undefined;
    return {
      identity: {
        kind: "session",
        id: session.id,
        tokenId: null,
        userId: session.userId,
        username: session.username,
        admin: session.admin,
        // A signed-in administrator acts as one, as in FlowFuse.
        // No expiry in the scope: tokens made in a browser are not bound to the session's end.
        scope: { readOnly: false, adminOptIn: true, teamIds: null, expiresAt: null },
        passwordExpired: session.passwordExpired,
      },
    };
  }

  /** Writes the lastUsedAt times gathered since the previous flush. */
  async flushUsage(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const batch = this.lastUsed;
    this.lastUsed = new Map();
    await touchTokens(this.db, batch);
  }
}

declare module "fastify" {
  interface FastifyInstance {
    /** Who is calling (the app's one authenticator: tests read its counts). */
    authenticator: Authenticator;
  }
  interface FastifyRequest {
    /** The caller, set by the authentication plugin (and by the pages' own session hook). */
    auth?: Identity;
    /** The team a REST team route names, looked up with the token. */
    preloadedTeam?: PreloadedTeam;
    /** Every team of the caller, looked up with the token (routes whose meta says `preload`). */
    preloadedUserTeams?: UserTeamRow[];
  }
  interface FastifyContextConfig {
    /** What authentication reads with the token for this REST route (core/rest.ts). */
    preload?: "userTeams";
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

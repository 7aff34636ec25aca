// Who is calling, for every request under /api/ and /trpc/ (plugins/authentication.ts) and for the
// pages: a bearer token, or (under /api/) the session cookie of a signed-in browser. This file
// dispatches to one module per credential kind (core/credentials/): personal access tokens (with
// the answers kept behind the access feed), sessions (browser and editor), provisioning tokens and
// devices' one-time codes; what they answer is in credentials/identity.ts.
//
// Digests found unknown are remembered (a bounded LRU shared by every kind), so a client
// hammering with a revoked or made-up token costs no query. This cannot delay a revocation or hide
// a new token: values are random and created here, so a digest unknown once is never valid later.
// (A suspended user's token is not unknown, and is not remembered as such.)
import type { AccessFeed, Db, EditorSessionIdentity, UserTeamRow } from "@flowplane/db";
import { LRUCache } from "lru-cache";
import type {
  Authenticated,
  AuthenticateOptions,
  CredentialStore,
  Identity,
  PreloadedTeam,
  SessionLifetime,
} from "./credentials/identity";
import { authenticateOtc } from "./credentials/one-time-codes";
import { PersonalTokens } from "./credentials/personal-tokens";
import { authenticateProvisioning } from "./credentials/provisioning-tokens";
import { Sessions } from "./credentials/sessions";

export class Authenticator {
  private readonly store: CredentialStore;
  private readonly tokens: PersonalTokens;
  private readonly sessions: Sessions;
  /** The database's access feed; undefined on PGlite (nothing is kept there). */
  readonly feed: AccessFeed | undefined;
  /** How often a token's request used what was kept, and how often it asked the database. */
  readonly counts: { kept: number; queried: number };

  constructor(
    db: Db,
    secret: string,
    sessions: SessionLifetime,
    onFeedError?: (error: Error) => void,
  ) {
    this.store = { db, secret, unknown: new LRUCache<string, true>({ max: 10_000 }) };
    this.tokens = new PersonalTokens(this.store, onFeedError);
    this.sessions = new Sessions(this.store, sessions);
    this.feed = this.tokens.feed;
    this.counts = this.tokens.counts;
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
    options: AuthenticateOptions = {},
  ): Promise<Authenticated | undefined> {
    if (header === undefined && options.sessionCookie !== undefined) {
      return this.sessions.authenticate(options.sessionCookie);
    }
    return this.tokens.authenticate(header, options);
  }

  /** A person's session in an instance's editor (credentials/sessions.ts). */
  authenticateEditor(
    value: string,
    projectId: string,
    /** false: a check that the session still holds, not a use of it (its idle time runs on). */
    activity = true,
  ): Promise<EditorSessionIdentity | undefined> {
    return this.sessions.authenticateEditor(value, projectId, activity);
  }

  /** A provisioning token, only where the caller accepts one (credentials/provisioning-tokens.ts). */
  authenticateProvisioning(header: string | undefined): Promise<Identity | undefined> {
    return authenticateProvisioning(this.store, header);
  }

  /** A device's one-time code, only where the caller accepts one (credentials/one-time-codes.ts). */
  authenticateOtc(header: string | undefined): Identity | undefined {
    return authenticateOtc(this.store.secret, header);
  }

  /** Writes the lastUsedAt times gathered since the previous flush. */
  flushUsage(): Promise<void> {
    return this.tokens.flushUsage();
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
    /**
     * Also open to a device's provisioning token or one-time code (the procedure's meta says
     * `provisioning` or `deviceSetup`: POST /api/v1/devices).
     */
    provisioning?: boolean;
  }
}

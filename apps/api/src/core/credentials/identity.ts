// What authentication answers, whatever the credential (core/authenticator.ts dispatches to the
// kinds beside this file): the caller's identity, the team or teams looked up with a token, and
// what every kind shares (the database, the secret, the digests found unknown).
import type { Caller } from "@flowplane/auth";
import type { Db, TeamForUser, UserTeamRow } from "@flowplane/db";
import type { LRUCache } from "lru-cache";

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

/** What every credential kind looks up with: digests found unknown are remembered across kinds. */
export interface CredentialStore {
  readonly db: Db;
  readonly secret: string;
  /** Digests found unknown (a bounded LRU): a client hammering with them costs no query. */
  readonly unknown: LRUCache<string, true>;
}

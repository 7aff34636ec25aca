// Sessions: a signed-in browser's session cookie (under /api/ and the pages) and a person's
// session in an instance's editor (`fpe_…`, made by the editor's sign-in). A suspended user's
// sessions fail while the suspension lasts; an ended one is deleted on the spot; a session's last
// activity is written at most once a minute.
import { parseToken, tokenDigest } from "@flowplane/auth";
import {
  deleteSession,
  type EditorSessionIdentity,
  findEditorSession,
  findSessionByDigest,
  touchSession,
} from "@flowplane/db";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Authenticated, CredentialStore, SessionLifetime } from "./identity";

/** The cookie that holds a signed-in browser's session. */
export const SESSION_COOKIE = "sid";

/**
 * The session cookie's value, parsed from the request's Cookie header (undefined: none). Cookies
 * are parsed only where a session is read, not for every request.
 */
export function sessionCookieOf(app: FastifyInstance, request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined || !header.includes(SESSION_COOKIE)) return undefined;
  return app.parseCookie(header)[SESSION_COOKIE];
}

/** How often a session's last activity is written at most (the idle timeout's resolution). */
const TOUCH_INTERVAL_MS = 60_000;

export class Sessions {
  constructor(
    private readonly store: CredentialStore,
    private readonly lifetime: SessionLifetime,
  ) {}

  /** A signed-in browser's session cookie: its user, with no scope limits. */
  async authenticate(value: string): Promise<Authenticated | undefined> {
    if (parseToken(value) !== "session") return undefined;
    const digest = tokenDigest(this.store.secret, value);
    if (this.store.unknown.has(digest)) return undefined;
    const session = await findSessionByDigest(this.store.db, digest);
    if (!session) {
      this.store.unknown.set(digest, true);
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
    const digest = tokenDigest(this.store.secret, value);
    if (this.store.unknown.has(digest)) return undefined;
    const session = await findEditorSession(this.store.db, digest, projectId);
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
      session.lastSeenAt.getTime() + this.lifetime.idleMs <= now
    ) {
      await deleteSession(this.store.db, session.id);
      this.store.unknown.set(digest, true);
      return false;
    }
    if (
      activity &&
      now - session.lastSeenAt.getTime() >= Math.min(TOUCH_INTERVAL_MS, this.lifetime.idleMs / 10)
    ) {
      await touchSession(this.store.db, session.id, new Date(now));
    }
    return true;
  }
}

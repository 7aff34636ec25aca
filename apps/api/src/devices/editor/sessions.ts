// Who is signed in to a device's editor. A person opens the editor from the platform (routes.ts,
// with their platform session): a member of the device's team is given a one-time code and sent
// to the device's editor host, which exchanges the code for a device-editor session, an HttpOnly
// cookie of that host alone. The platform's session never reaches that host, and the session
// reaches no other device's host. The session names the person and the device, not their rights:
// every request is judged by the person's role of the moment (front-door.ts).
//
// Codes and sessions are kept in memory, digests only, as the tunnels are (tunnels.ts): a device's
// editor is reached through the process its agent's tunnel is connected to, and a restart ends
// both (the agent reconnects its tunnel; a person opens the editor from the platform again).
import { randomBase62, tokenDigest } from "@flowplane/auth";

/** How long a code waits for its exchange. */
const CODE_LIFETIME_MS = 60_000;
/** How long a device-editor session lasts at most, and unused. */
const SESSION_MAX_AGE_MS = 12 * 3600_000;
const SESSION_IDLE_MS = 2 * 3600_000;
/** How many device-editor sessions a person keeps at most (the oldest go first). */
const SESSIONS_PER_USER = 20;
/** How often ended codes and sessions are dropped, used or not. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/** The cookie of a device-editor session, on the device's editor host only. */
export const DEVICE_EDITOR_COOKIE = "fp_device_editor";

interface Grant {
  userId: string;
  deviceId: string;
  expiresAt: number;
  lastUsedAt: number;
}

export class DeviceEditorSessions {
  private readonly codes = new Map<string, Grant>();
  private readonly sessions = new Map<string, Grant>();

  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly secret: string) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  /** Stops the sweeper (the server closes). */
  close(): void {
    clearInterval(this.sweeper);
  }

  /** A one-time code for the person into the device's editor. */
  issueCode(userId: string, deviceId: string): string {
    this.sweep();
    const code = randomBase62(32);
    const now = Date.now();
    this.codes.set(this.digest(code), {
      userId,
      deviceId,
      expiresAt: now + CODE_LIFETIME_MS,
      lastUsedAt: now,
    });
    return code;
  }

  /** The code exchanged, once, for a session in the same device's editor. */
  exchange(code: string, deviceId: string): string | undefined {
    const digest = this.digest(code);
    const grant = this.codes.get(digest);
    this.codes.delete(digest);
    if (!grant || grant.deviceId !== deviceId || grant.expiresAt < Date.now()) return undefined;
    this.dropOldest(grant.userId);
    const session = randomBase62(40);
    const now = Date.now();
    this.sessions.set(this.digest(session), {
      userId: grant.userId,
      deviceId,
      expiresAt: now + SESSION_MAX_AGE_MS,
      lastUsedAt: now,
    });
    return session;
  }

  /** The person a session cookie signs in to this device's editor, if any. */
  userOf(
    session: string | undefined,
    deviceId: string,
    /** false: a check that the session still holds (an open socket), not a use of it. */
    activity = true,
  ): string | undefined {
    if (!session || session.length > 128) return undefined;
    const digest = this.digest(session);
    const grant = this.sessions.get(digest);
    const now = Date.now();
    if (!grant || grant.deviceId !== deviceId) return undefined;
    if (grant.expiresAt < now || grant.lastUsedAt + SESSION_IDLE_MS < now) {
      this.sessions.delete(digest);
      return undefined;
    }
    if (activity) grant.lastUsedAt = now;
    return grant.userId;
  }

  /** Ends every session into the device's editor (its editor was disabled). */
  endDevice(deviceId: string): void {
    for (const [digest, grant] of this.sessions) {
      if (grant.deviceId === deviceId) this.sessions.delete(digest);
    }
  }

  /** Makes room for one more session of the person's: their oldest go past the cap. */
  private dropOldest(userId: string): void {
    const theirs = [...this.sessions].filter(([, grant]) => grant.userId === userId);
    // A Map iterates in insertion order: the first are the oldest.
    for (const [digest] of theirs.slice(0, Math.max(0, theirs.length - SESSIONS_PER_USER + 1))) {
      this.sessions.delete(digest);
    }
  }

  private digest(value: string): string {
    return tokenDigest(this.secret, `device-editor:${value}`);
  }

  private sweep(): void {
    const now = Date.now();
    for (const store of [this.codes, this.sessions]) {
      for (const [digest, grant] of store) {
        if (grant.expiresAt < now || grant.lastUsedAt + SESSION_IDLE_MS < now) store.delete(digest);
      }
    }
  }
}

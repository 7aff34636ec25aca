// Sign-in sessions, kept server-side so that every server process honours them and signing out,
// suspension or a password change ends them at once. Only a digest of the cookie's value is stored.
import type { Kysely } from "kysely";
import { compiledOnce } from "../compiled-once";
import { newId } from "../ids";
import { findValue } from "../rows";
import { callerOf } from "./users";
import type { Database } from "../schema";

export interface SessionIdentity {
  id: string;
  userId: string;
  username: string;
  admin: boolean;
  suspended: boolean;
  passwordExpired: boolean;
  lastSeenAt: Date;
  expiresAt: Date;
}

export async function insertSession(
  db: Kysely<Database>,
  /** `projectId`: an instance's editor session, which reaches that editor only. */
  session: {
    userId: string;
    digest: string;
    expiresAt: Date;
    projectId?: string;
    /** An editor session a script made with the person's own token. */
    scripted?: boolean;
  },
): Promise<{ id: string }> {
  return db
    .insertInto("sessions")
    .values({
      id: newId(),
      user_id: session.userId,
      digest: session.digest,
      expires_at: session.expiresAt,
      project_id: session.projectId ?? null,
      scripted: session.scripted ?? false,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
}

export async function findSessionByDigest(
  db: Kysely<Database>,
  digest: string,
): Promise<SessionIdentity | undefined> {
  const [row] = await sessionByDigest(db, digest);
  return row && identityOf(row);
}

/** What a session's identity is read from: its row and its user's. */
const IDENTITY_COLUMNS = [
  "s.id",
  "s.user_id",
  "s.last_seen_at",
  "s.expires_at",
  "u.username",
  "u.admin",
  "u.suspended",
  "u.password_expired",
] as const;

const sessionByDigest = compiledOnce((db, digest: string) =>
  db
    .selectFrom("sessions as s")
    .innerJoin("users as u", "u.id", "s.user_id")
    .select(IDENTITY_COLUMNS)
    .where("s.digest", "=", digest)
    // An editor session is never a browser's session of the platform.
    .where("s.project_id", "is", null),
);

/** The identity a session gives: its row and its user's, as the API reads them. */
function identityOf(row: Awaited<ReturnType<typeof sessionByDigest>>[number]): SessionIdentity {
  return {
    ...callerOf(row),
    passwordExpired: row.password_expired,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
  };
}

/** An editor session, with the user's role of the moment in the instance's team. */
export interface EditorSessionIdentity extends SessionIdentity {
  /** undefined: not (or no longer) a member of the instance's team. */
  role: number | undefined;
  /** Made by a script with the person's own token (not by a sign-in). */
  scripted: boolean;
}

/** The editor session with this digest, when it belongs to this instance. */
export async function findEditorSession(
  db: Kysely<Database>,
  digest: string,
  projectId: string,
): Promise<EditorSessionIdentity | undefined> {
  const [row] = await editorSessionByDigest(db, digest, projectId);
  return row && { ...identityOf(row), role: row.role ?? undefined, scripted: row.scripted };
}

const editorSessionByDigest = compiledOnce((db, digest: string, projectId: string) =>
  db
    .selectFrom("sessions as s")
    .innerJoin("users as u", "u.id", "s.user_id")
    .innerJoin("projects as p", "p.id", "s.project_id")
    .leftJoin("team_members as m", (join) =>
      join.onRef("m.team_id", "=", "p.team_id").onRef("m.user_id", "=", "s.user_id"),
    )
    .select([...IDENTITY_COLUMNS, "m.role", "s.scripted"])
    .where("s.digest", "=", digest)
    .where("s.project_id", "=", projectId),
);

/** Ends one editor session of this instance (signed out in its editor); true when there was one. */
export async function deleteEditorSession(
  db: Kysely<Database>,
  digest: string,
  projectId: string,
): Promise<boolean> {
  const deleted = await db
    .deleteFrom("sessions")
    .where("digest", "=", digest)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

/** Ends the user's editor sessions on the team's instances (they left the team, or were removed). */
export async function deleteEditorSessionsInTeam(
  db: Kysely<Database>,
  userId: string,
  teamId: string,
): Promise<void> {
  await db
    .deleteFrom("sessions")
    .where("user_id", "=", userId)
    .where("project_id", "in", (eb) =>
      eb.selectFrom("projects").select("id").where("team_id", "=", teamId),
    )
    .execute();
}

/** When the session began (its sign-in), or undefined when it has ended. */
export async function sessionStartedAt(
  db: Kysely<Database>,
  id: string,
): Promise<Date | undefined> {
  return findValue(db, "sessions", "created_at", { id });
}

export async function touchSession(db: Kysely<Database>, id: string, at: Date): Promise<void> {
  await db.updateTable("sessions").set({ last_seen_at: at }).where("id", "=", id).execute();
}

export async function deleteSession(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom("sessions").where("id", "=", id).execute();
}

/**
 * Ends every session of the user (browsers' and editors'), but the one named (the caller's own,
 * after a password change): how many ended.
 */
export async function deleteUserSessions(
  db: Kysely<Database>,
  userId: string,
  except?: string,
): Promise<number> {
  let query = db.deleteFrom("sessions").where("user_id", "=", userId);
  if (except !== undefined) query = query.where("id", "<>", except);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes sessions past their maximum age or idle longer than `idleMs`. */
export async function deleteStaleSessions(
  db: Kysely<Database>,
  now: Date,
  idleMs: number,
): Promise<number> {
  const result = await db
    .deleteFrom("sessions")
    .where((eb) =>
      eb.or([
        eb("expires_at", "<=", now),
        eb("last_seen_at", "<=", new Date(now.getTime() - idleMs)),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Keeps an editor's authorization code (its digest) until it is exchanged or expires. */
export async function insertEditorCode(
  db: Kysely<Database>,
  code: { digest: string; userId: string; projectId: string; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto("editor_authorization_codes")
    .values({
      digest: code.digest,
      user_id: code.userId,
      project_id: code.projectId,
      expires_at: code.expiresAt,
    })
    .execute();
}

/**
 * Takes an authorization code for the instance, once: the code is deleted whether or not it was
 * still valid, and its user is returned only when it had not expired.
 */
export async function takeEditorCode(
  db: Kysely<Database>,
  digest: string,
  projectId: string,
): Promise<{ userId: string } | undefined> {
  const row = await db
    .deleteFrom("editor_authorization_codes")
    .where("digest", "=", digest)
    .where("project_id", "=", projectId)
    .returning(["user_id", "expires_at"])
    .executeTakeFirst();
  return row && row.expires_at.getTime() > Date.now() ? { userId: row.user_id } : undefined;
}

/** Deletes the codes no longer exchangeable (the housekeeping sweep). */
export async function deleteExpiredEditorCodes(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom("editor_authorization_codes").where("expires_at", "<=", new Date()).execute();
}

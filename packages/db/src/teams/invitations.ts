// Invitations to join a team: by user (invitee_id, with the email when it was sent to one) or by an email nobody has yet. An expired one is
// as if it did not exist: every query here leaves it out, and inviting again replaces it.
import { type Kysely, sql } from "kysely";
import { newId } from "../ids";
import type { Database, InvitationRow } from "../schema";

/** An invitation with its team, and the inviting and invited users (null when there is none). */
export interface InvitationDetail extends InvitationRow {
  team: { id: string; name: string; slug: string };
  invitor: InvitationUser | null;
  invitee: InvitationUser | null;
}

export interface InvitationUser {
  id: string;
  username: string;
  name: string;
  admin: boolean;
  suspended: boolean;
  created_at: Date;
}

const USER_COLUMNS = ["id", "username", "name", "admin", "suspended", "created_at"] as const;

function detailQuery(db: Kysely<Database>) {
  return db
    .selectFrom("invitations as i")
    .innerJoin("teams as t", "t.id", "i.team_id")
    .leftJoin("users as ir", "ir.id", "i.invitor_id")
    .leftJoin("users as ie", "ie.id", "i.invitee_id")
    .selectAll("i")
    .select(["t.name as team_name", "t.slug as team_slug"])
    .select(USER_COLUMNS.map((column) => `ir.${column} as ir_${column}` as const))
    .select(USER_COLUMNS.map((column) => `ie.${column} as ie_${column}` as const))
    .where("i.expires_at", ">", sql<Date>`now()`)
    .orderBy("i.created_at")
    .orderBy("i.id");
}

type DetailRow = Awaited<ReturnType<ReturnType<typeof detailQuery>["execute"]>>[number];

/** The joined user whose columns are prefixed `ir_` (invitor) or `ie_` (invitee). */
function userOf(row: DetailRow, prefix: "ir" | "ie"): InvitationUser | null {
  const record = row as unknown as Record<string, unknown>;
  if (record[`${prefix}_id`] == null) return null;
  return Object.fromEntries(
    USER_COLUMNS.map((column) => [column, record[`${prefix}_${column}`]]),
  ) as unknown as InvitationUser;
}

function detailOf(row: DetailRow): InvitationDetail {
  return {
    id: row.id,
    team_id: row.team_id,
    invitor_id: row.invitor_id,
    invitee_id: row.invitee_id,
    email: row.email,
    role: row.role,
    created_at: row.created_at,
    sent_at: row.sent_at,
    expires_at: row.expires_at,
    team: { id: row.team_id, name: row.team_name, slug: row.team_slug },
    invitor: userOf(row, "ir"),
    invitee: userOf(row, "ie"),
  };
}

/** The team's pending (unexpired) invitations, oldest first. */
export async function listTeamInvitations(
  db: Kysely<Database>,
  teamId: string,
): Promise<InvitationDetail[]> {
  const rows = await detailQuery(db).where("i.team_id", "=", teamId).execute();
  return rows.map(detailOf);
}

/** Every pending invitation of the platform, oldest first (administrators). */
export async function listAllInvitations(db: Kysely<Database>): Promise<InvitationDetail[]> {
  const rows = await detailQuery(db).execute();
  return rows.map(detailOf);
}

/** The invitation of the team, unless it has expired. */
export async function findTeamInvitation(
  db: Kysely<Database>,
  teamId: string,
  invitationId: string,
): Promise<InvitationDetail | undefined> {
  const row = await detailQuery(db)
    .where("i.team_id", "=", teamId)
    .where("i.id", "=", invitationId)
    .executeTakeFirst();
  return row && detailOf(row);
}

/**
 * Which invitations are the user's: those addressed to their account when they were sent. Never
 * by email alone: emails are not verified, so an invitation to an address nobody had could be
 * taken by whoever puts it on their profile first.
 */
function addressedTo(user: { id: string; email: string | null }) {
  return sql<boolean>`i.invitee_id = ${user.id}`;
}

/** The user's pending invitations, oldest first. */
export async function listUserInvitations(
  db: Kysely<Database>,
  user: { id: string; email: string | null },
): Promise<InvitationDetail[]> {
  const rows = await detailQuery(db).where(addressedTo(user)).execute();
  return rows.map(detailOf);
}

/** One of the user's pending invitations. */
export async function findUserInvitation(
  db: Kysely<Database>,
  user: { id: string; email: string | null },
  invitationId: string,
): Promise<InvitationDetail | undefined> {
  const row = await detailQuery(db)
    .where(addressedTo(user))
    .where("i.id", "=", invitationId)
    .executeTakeFirst();
  return row && detailOf(row);
}

/** Who already has a pending invitation to the team: user ids and (lower-case) emails. */
export async function pendingInvitees(
  db: Kysely<Database>,
  teamId: string,
): Promise<{
  userIds: Set<string>;
  /** Lower-cased: the addresses invitations were sent to, and the invited accounts' emails. */
  emails: Set<string>;
  /** Lower-cased: only the addresses invitations were sent to, as the team sees them. */
  addresses: Set<string>;
  /** Accounts invited through their address (the team sees the address, not the account). */
  addressedUserIds: Set<string>;
}> {
  const rows = await db
    .selectFrom("invitations as i")
    .leftJoin("users as u", "u.id", "i.invitee_id")
    .select([
      "i.invitee_id",
      sql<string | null>`lower(coalesce(i.email, u.email))`.as("email"),
      sql<string | null>`lower(i.email)`.as("address"),
    ])
    .where("i.team_id", "=", teamId)
    .where("i.expires_at", ">", sql<Date>`now()`)
    .execute();
  return {
    userIds: new Set(rows.flatMap((row) => (row.invitee_id ? [row.invitee_id] : []))),
    emails: new Set(rows.flatMap((row) => (row.email ? [row.email] : []))),
    addresses: new Set(rows.flatMap((row) => (row.address ? [row.address] : []))),
    addressedUserIds: new Set(
      rows.flatMap((row) => (row.invitee_id && row.address ? [row.invitee_id] : [])),
    ),
  };
}

export async function countPendingInvitations(
  db: Kysely<Database>,
  teamId: string,
): Promise<number> {
  const { n } = await db
    .selectFrom("invitations")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("team_id", "=", teamId)
    .where("expires_at", ">", sql<Date>`now()`)
    .executeTakeFirstOrThrow();
  return n;
}

export async function insertInvitation(
  trx: Kysely<Database>,
  invitation: {
    teamId: string;
    invitorId: string;
    /** A user (by username, or by `email` as it was typed), or an email nobody has. */
    invitee: { userId: string; email?: string } | { email: string };
    role: number;
    expiresAt: Date;
  },
): Promise<InvitationRow> {
  return trx
    .insertInto("invitations")
    .values({
      id: newId(),
      team_id: invitation.teamId,
      invitor_id: invitation.invitorId,
      invitee_id: "userId" in invitation.invitee ? invitation.invitee.userId : null,
      email: invitation.invitee.email ?? null,
      role: invitation.role,
      expires_at: invitation.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Sent again: a new `sent_at` and expiry. False when it has expired or is gone meanwhile. */
export async function renewInvitation(
  trx: Kysely<Database>,
  invitationId: string,
  expiresAt: Date,
): Promise<boolean> {
  const result = await trx
    .updateTable("invitations")
    .set({ sent_at: sql`now()`, expires_at: expiresAt })
    .where("id", "=", invitationId)
    .where("expires_at", ">", sql<Date>`now()`)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Deletes a pending invitation; false when it has expired or another request took it first (the
 * one that deletes it is the one that may act on it: accept, reject or revoke).
 */
export async function deleteInvitation(
  trx: Kysely<Database>,
  invitationId: string,
): Promise<boolean> {
  const result = await trx
    .deleteFrom("invitations")
    .where("id", "=", invitationId)
    .where("expires_at", ">", sql<Date>`now()`)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Deletes expired invitations (of one team, or everywhere): they only take up their names. */
export async function deleteExpiredInvitations(
  db: Kysely<Database>,
  teamId?: string,
): Promise<number> {
  let query = db.deleteFrom("invitations").where("expires_at", "<=", sql<Date>`now()`);
  if (teamId !== undefined) query = query.where("team_id", "=", teamId);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

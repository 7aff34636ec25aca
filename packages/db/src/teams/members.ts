// Team members: the list, one membership, role changes and removal, the owners a team must keep,
// and the counts the member limit needs.
import type { Kysely } from "kysely";
import type { Database, UserRow } from "../schema";
import { countWhere } from "../rows";

export type MemberRow = Pick<
  UserRow,
  "id" | "username" | "name" | "admin" | "suspended" | "created_at"
> & { role: number };

function membersQuery(db: Kysely<Database>, teamId: string) {
  return db
    .selectFrom("team_members as m")
    .innerJoin("users as u", "u.id", "m.user_id")
    .select(["u.id", "u.username", "u.name", "u.admin", "u.suspended", "u.created_at", "m.role"])
    .where("m.team_id", "=", teamId);
}

/** The team's members, by username. */
export async function listMembers(db: Kysely<Database>, teamId: string): Promise<MemberRow[]> {
  return membersQuery(db, teamId).orderBy("u.username").orderBy("u.id").execute();
}

export async function findMember(
  db: Kysely<Database>,
  teamId: string,
  userId: string,
): Promise<MemberRow | undefined> {
  return membersQuery(db, teamId).where("m.user_id", "=", userId).executeTakeFirst();
}

/**
 * The team's owners, their memberships locked for the rest of the transaction: two requests that
 * each demote or remove a different owner are serialized, and the second sees the first's change,
 * so a team never loses its last owner.
 */
export async function lockTeamOwners(trx: Kysely<Database>, teamId: string): Promise<string[]> {
  const rows = await trx
    .selectFrom("team_members")
    .select("user_id")
    .where("team_id", "=", teamId)
    .where("role", ">=", 50)
    .orderBy("user_id")
    .forUpdate()
    .execute();
  return rows.map((row) => row.user_id);
}

export async function setMemberRole(
  trx: Kysely<Database>,
  teamId: string,
  userId: string,
  role: number,
): Promise<boolean> {
  const result = await trx
    .updateTable("team_members")
    .set({ role })
    .where("team_id", "=", teamId)
    .where("user_id", "=", userId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Ends a membership. The user's tokens no longer name the team in their restriction (rejoining
 * later does not bring an old restricted token back to it), and it stops being their default team.
 */
export async function removeMember(
  trx: Kysely<Database>,
  teamId: string,
  userId: string,
): Promise<boolean> {
  const result = await trx
    .deleteFrom("team_members")
    .where("team_id", "=", teamId)
    .where("user_id", "=", userId)
    .executeTakeFirst();
  if (result.numDeletedRows === 0n) return false;
  await trx
    .deleteFrom("access_token_teams")
    .where("team_id", "=", teamId)
    .where("token_id", "in", (eb) =>
      eb.selectFrom("access_tokens").select("id").where("user_id", "=", userId),
    )
    .execute();
  await trx
    .updateTable("users")
    .set({ default_team_id: null })
    .where("id", "=", userId)
    .where("default_team_id", "=", teamId)
    .execute();
  return true;
}

/**
 * Locks the team's row for the rest of the transaction: whatever adds members or invitations
 * takes it first, so two of them cannot both fit under the member limit with one place left.
 * False when the team no longer exists.
 */
export async function lockTeam(trx: Kysely<Database>, teamId: string): Promise<boolean> {
  const row = await trx
    .selectFrom("teams")
    .select("id")
    .where("id", "=", teamId)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

export async function countMembers(db: Kysely<Database>, teamId: string): Promise<number> {
  return countWhere(db, "team_members", "team_id", teamId);
}

import { type Expression, type Kysely, sql } from "kysely";
import { type AuditEntry, auditRow, auditWritten } from "../audit-log/record";
import { compiledOnce } from "../compiled-once";
import { newId } from "../ids";
import { countUpTo, keysetPage, type PageRequest } from "../paging";
import type { Database, TeamRow } from "../schema";
import { teamTypeOf, type TeamTypeSummaryRow } from "./team-types";

/** A team with its member count and its type, as every team reply shows it. */
export type TeamWithCount = TeamRow & { member_count: number; type: TeamTypeSummaryRow };

/** The member count of the team whose id is in `teamIdColumn`, as a column named `alias`. */
export function memberCount<A extends string = "member_count">(
  teamIdColumn = "teams.id",
  alias = "member_count" as A,
) {
  return sql<number>`(select count(*)::int from team_members mc where mc.team_id = ${sql.ref(teamIdColumn)})`.as(
    alias,
  );
}

/**
 * Creates a team with `ownerId` as its owner (role 50), of type `typeId` (default: the column's
 * default, the seeded type). A type deleted meanwhile is a foreign-key violation.
 */
export async function insertTeam(
  trx: Kysely<Database>,
  team: { name: string; slug: string; ownerId: string; ownerRole: number; typeId?: string },
): Promise<TeamWithCount> {
  const row = await trx
    .insertInto("teams")
    .values({
      id: newId(),
      name: team.name,
      slug: team.slug,
      ...(team.typeId === undefined ? {} : { type_id: team.typeId }),
    })
    .returningAll()
    .returning(teamTypeOf())
    .executeTakeFirstOrThrow();
  await trx
    .insertInto("team_members")
    .values({ team_id: row.id, user_id: team.ownerId, role: team.ownerRole })
    .execute();
  return { ...row, member_count: 1 };
}

export async function slugExists(db: Kysely<Database>, slug: string): Promise<boolean> {
  const row = await db.selectFrom("teams").select("id").where("slug", "=", slug).executeTakeFirst();
  return row !== undefined;
}

/** A team with its member count, and a user's role in it (undefined when not a member). */
export interface TeamForUser {
  team: TeamWithCount;
  role: number | undefined;
}

export async function findTeamForUser(
  db: Kysely<Database>,
  teamId: string,
  userId: string,
): Promise<TeamForUser | undefined> {
  return teamAndRole(await teamForUser(db, teamId, userId));
}

const teamForUser = compiledOnce((db, teamId: string, userId: string) =>
  teamForUserQuery(db, userId).where("teams.id", "=", teamId),
);

/** The same, by the team's slug (`GET /teams/slug/{slug}`). */
export async function findTeamForUserBySlug(
  db: Kysely<Database>,
  slug: string,
  userId: string,
): Promise<TeamForUser | undefined> {
  return teamAndRole(await teamBySlugForUser(db, slug, userId));
}

const teamBySlugForUser = compiledOnce((db, slug: string, userId: string) =>
  teamForUserQuery(db, userId).where("teams.slug", "=", slug),
);

/** The team the query found, if any, and the user's role in it. */
function teamAndRole([row]: Awaited<ReturnType<typeof teamForUser>>): TeamForUser | undefined {
  if (!row) return undefined;
  const { role, ...team } = row;
  return { team, role: role ?? undefined };
}

function teamForUserQuery(db: Kysely<Database>, userId: string) {
  return db
    .selectFrom("teams")
    .leftJoin("team_members as m", (join) =>
      join.onRef("m.team_id", "=", "teams.id").on("m.user_id", "=", userId),
    )
    .selectAll("teams")
    .select([memberCount(), teamTypeOf(), "m.role"]);
}

export type UserTeamRow = Pick<TeamRow, "id" | "name" | "slug" | "type_id"> & {
  member_count: number;
  role: number;
  type_name: string;
  type_active: boolean;
};

/** The user's teams with their role, optionally only those in `teamIds`. */
export async function listUserTeams(
  db: Kysely<Database>,
  userId: string,
  teamIds: readonly string[] | null,
): Promise<UserTeamRow[]> {
  if (teamIds === null) return allUserTeams(db, userId);
  if (teamIds.length === 0) return [];
  return userTeamsQuery(db, userId).where("teams.id", "in", teamIds).execute();
}

/** Of all of a user's teams (`listUserTeams` with null), those in `teamIds` (null: all). */
export function userTeamsIn(rows: UserTeamRow[], teamIds: readonly string[] | null): UserTeamRow[] {
  return teamIds === null ? rows : rows.filter((row) => teamIds.includes(row.id));
}

/** The query of `listUserTeams` with null: every team of the user, by name. */
export function userTeamsQuery(db: Kysely<Database>, userId: string | Expression<string>) {
  return db
    .selectFrom("team_members as m")
    .innerJoin("teams", "teams.id", "m.team_id")
    .innerJoin("team_types as tt", "tt.id", "teams.type_id")
    .select([
      "teams.id",
      "teams.name",
      "teams.slug",
      "teams.type_id",
      "tt.name as type_name",
      "tt.active as type_active",
      memberCount(),
      "m.role",
    ])
    .where("m.user_id", "=", userId)
    .orderBy("teams.name")
    .orderBy("teams.id");
}

const allUserTeams = compiledOnce((db, userId: string) => userTeamsQuery(db, userId));

/**
 * Every team, oldest first, a page at a time; `cursor` is the id of the last team seen. `total`
 * counts the teams up to `countCap`.
 */
export async function listTeams(
  db: Kysely<Database>,
  request: PageRequest,
  countCap: number,
): Promise<{ teams: TeamWithCount[]; total: number; nextCursor?: string }> {
  const { rows: teams, ...page } = await keysetPage(
    db.selectFrom("teams").selectAll("teams").select([memberCount(), teamTypeOf()]),
    countUpTo(db, db.selectFrom("teams"), countCap),
    { table: "teams", key: "created_at" },
    request,
  );
  return { teams, ...page };
}

/**
 * Changes a team and writes its audit entry in one statement: a data-modifying CTE makes both
 * atomic in a single round trip, where BEGIN, UPDATE, INSERT, COMMIT would take four. Undefined
 * when the team no longer exists (and then nothing is logged).
 */
export async function updateTeam(
  db: Kysely<Database>,
  teamId: string,
  change: { name?: string; slug?: string },
  audit: AuditEntry,
): Promise<TeamWithCount | undefined> {
  const row = auditRow(audit);
  const [team] = await changeTeamLogged(
    db,
    teamId,
    change.name ?? null,
    change.slug ?? null,
    row.id,
    row.event,
    row.entity_type,
    row.entity_id ?? null,
    row.team_id ?? null,
    row.actor_id ?? null,
    row.source ?? null,
    row.token_id ?? null,
    row.body as string,
    row.ip ?? null,
  );
  if (team) auditWritten(audit);
  return team as TeamWithCount | undefined;
}

/**
 * The change and its audit entry in one statement, compiled once (a rename is a hot write: Kysely
 * built and compiled this statement anew for every request). A null name or slug keeps the
 * column as it is; both columns are NOT NULL, so null never means a value.
 */
const changeTeamLogged = compiledOnce(
  (
    db,
    teamId: string,
    name: string | null,
    slug: string | null,
    id: string,
    event: string,
    entityType: string,
    entityId: string | null,
    auditTeamId: string | null,
    actorId: string | null,
    source: string | null,
    tokenId: string | null,
    body: string,
    ip: string | null,
  ) =>
    db
      .with("changed", (qb) =>
        qb
          .updateTable("teams")
          .set({
            name: sql`coalesce(${name}, name)`,
            slug: sql`coalesce(${slug}, slug)`,
            updated_at: sql`now()`,
          })
          .where("id", "=", teamId)
          .returningAll(),
      )
      .with("logged", (qb) =>
        qb
          .insertInto("audit_log")
          .columns([
            "id",
            "event",
            "entity_type",
            "entity_id",
            "team_id",
            "actor_id",
            "source",
            "token_id",
            "body",
            "ip",
          ])
          .expression((eb) =>
            eb
              .selectFrom("changed")
              .select([
                eb.val(id).as("id"),
                eb.val(event).as("event"),
                eb.val(entityType).as("entity_type"),
                eb.val(entityId).as("entity_id"),
                eb.val(auditTeamId).as("team_id"),
                eb.val(actorId).as("actor_id"),
                eb.val(source).as("source"),
                eb.val(tokenId).as("token_id"),
                sql`${body}::jsonb`.as("body"),
                sql<string | null>`${ip}::text`.as("ip"),
              ]),
          ),
      )
      .selectFrom("changed")
      .selectAll("changed")
      .select([memberCount("changed.id"), teamTypeOf("changed.type_id")]),
);

/** Ids of the teams among `teamIds` that the user is a member of. */
export async function memberTeamIds(
  db: Kysely<Database>,
  userId: string,
  teamIds: readonly string[],
): Promise<string[]> {
  if (teamIds.length === 0) return [];
  const rows = await db
    .selectFrom("team_members")
    .select("team_id")
    .where("user_id", "=", userId)
    .where("team_id", "in", teamIds)
    .execute();
  return rows.map((r) => r.team_id);
}

export async function addMember(
  db: Kysely<Database>,
  member: { teamId: string; userId: string; role: number },
): Promise<void> {
  await db
    .insertInto("team_members")
    .values({ team_id: member.teamId, user_id: member.userId, role: member.role })
    .execute();
}

/**
 * Deletes a team and, by cascade in the same statement, its memberships, invitations and the
 * rows that restrict tokens to it (a token restricted to it alone then reaches no team); users
 * whose default team it was get none. Undefined when it no longer exists.
 */
export async function deleteTeam(
  trx: Kysely<Database>,
  teamId: string,
): Promise<TeamRow | undefined> {
  return trx.deleteFrom("teams").where("id", "=", teamId).returningAll().executeTakeFirst();
}

// Personal access tokens: lookup by digest on every request, the token tree, expiry and lastUsedAt.
import type { TokenScope } from "@flowplane/auth";
import { type Kysely, sql } from "kysely";
import { compiledOnce } from "./compiled-once";
import { callerOf } from "./accounts/users";
import { newId } from "./ids";
import type { AccessTokenRow, Database } from "./schema";
import { teamTypeOf } from "./teams/team-types";
import { memberCount, type TeamForUser, type UserTeamRow, userTeamsQuery } from "./teams/teams";

/** What authentication needs: the token, its scope and its owner, in one query. */
export interface TokenIdentity {
  id: string;
  userId: string;
  username: string;
  admin: boolean;
  /** The owner is suspended: the token must fail (but stays, for when they are reinstated). */
  suspended: boolean;
  scope: TokenScope;
}

export async function findTokenByDigest(
  db: Kysely<Database>,
  digest: string,
): Promise<TokenIdentity | undefined> {
  const [row] = await identityByDigest(db, digest);
  return row && identityOf(row);
}

/**
 * The token, and in the same round trip a team with the owner's membership in it: what every
 * request to a team's route needs first. `team` is undefined when no such team exists.
 */
export async function findTokenAndTeam(
  db: Kysely<Database>,
  digest: string,
  teamId: string,
): Promise<{ identity: TokenIdentity; team: TeamForUser | undefined } | undefined> {
  const [row] = await identityAndTeam(db, digest, teamId);
  if (!row) return undefined;
  const team: TeamForUser | undefined =
    row.team_id === null
      ? undefined
      : {
          team: {
            id: row.team_id,
            name: row.team_name!,
            slug: row.team_slug!,
            type_id: row.team_type_id!,
            created_at: row.team_created_at!,
            updated_at: row.team_updated_at!,
            version: row.team_version!,
            member_count: row.team_member_count,
            type: row.team_type!,
          },
          role: row.team_role ?? undefined,
        };
  return { identity: identityOf(row), team };
}

/**
 * The token, and in the same round trip every team of its owner (as `listUserTeams` with null
 * gives them, by name): what GET /user/teams needs, in one query instead of two.
 */
export async function findTokenAndUserTeams(
  db: Kysely<Database>,
  digest: string,
): Promise<{ identity: TokenIdentity; teams: UserTeamRow[] } | undefined> {
  const [row] = await identityAndUserTeams(db, digest);
  return row && { identity: identityOf(row), teams: row.user_teams };
}

const identityByDigest = compiledOnce((db, digest: string) => identityQuery(db, digest));

const identityAndUserTeams = compiledOnce((db, digest: string) =>
  identityQuery(db, digest).select((eb) =>
    sql<UserTeamRow[]>`coalesce((select json_agg(ut order by ut.name, ut.id) from (${userTeamsQuery(
      db,
      eb.ref("t.user_id"),
    )}) ut), '[]'::json)`.as("user_teams"),
  ),
);

const identityAndTeam = compiledOnce((db, digest: string, teamId: string) =>
  identityQuery(db, digest)
    .leftJoin("teams as team", (join) => join.on("team.id", "=", teamId))
    .leftJoin("team_members as m", (join) =>
      join.onRef("m.team_id", "=", "team.id").onRef("m.user_id", "=", "t.user_id"),
    )
    .select([
      "team.id as team_id",
      "team.name as team_name",
      "team.slug as team_slug",
      "team.type_id as team_type_id",
      "team.created_at as team_created_at",
      "team.updated_at as team_updated_at",
      "team.version as team_version",
      "m.role as team_role",
      memberCount("team.id", "team_member_count"),
      teamTypeOf("team.type_id", "team_type"),
    ]),
);

function identityQuery(db: Kysely<Database>, digest: string) {
  return db
    .selectFrom("access_tokens as t")
    .innerJoin("users as u", "u.id", "t.user_id")
    .select([
      "t.id",
      "t.user_id",
      "t.read_only",
      "t.admin_opt_in",
      "t.team_restricted",
      "t.expires_at",
      "u.username",
      "u.admin",
      "u.suspended",
      sql<
        string[] | null
      >`case when t.team_restricted then array(select a.team_id from access_token_teams a where a.token_id = t.id) end`.as(
        "team_ids",
      ),
    ])
    .where("t.digest", "=", digest);
}

function identityOf(row: {
  id: string;
  user_id: string;
  username: string;
  admin: boolean;
  suspended: boolean;
  read_only: boolean;
  admin_opt_in: boolean;
  team_restricted: boolean;
  team_ids: string[] | null;
  expires_at: Date | null;
}): TokenIdentity {
  return {
    ...callerOf(row),
    scope: {
      readOnly: row.read_only,
      adminOptIn: row.admin_opt_in,
      teamIds: row.team_restricted ? (row.team_ids ?? []) : null,
      expiresAt: row.expires_at,
    },
  };
}

export interface TokenSummaryRow {
  id: string;
  name: string;
  read_only: boolean;
  admin_opt_in: boolean;
  expires_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
  teams: { id: string; name: string }[];
}

function summaryQuery(db: Kysely<Database>) {
  return db
    .selectFrom("access_tokens as t")
    .select([
      "t.id",
      "t.name",
      "t.read_only",
      "t.admin_opt_in",
      "t.expires_at",
      "t.last_used_at",
      "t.created_at",
      sql<
        { id: string; name: string }[]
      >`coalesce((select json_agg(json_build_object('id', tm.id, 'name', tm.name) order by tm.name, tm.id) from access_token_teams a join teams tm on tm.id = a.team_id where a.token_id = t.id), '[]'::json)`.as(
        "teams",
      ),
    ]);
}

/** The user's tokens, newest first. Expired ones are left out (they are deleted by the sweep). */
export async function listTokens(db: Kysely<Database>, userId: string): Promise<TokenSummaryRow[]> {
  return summaryQuery(db)
    .where("t.user_id", "=", userId)
    .where((eb) =>
      eb.or([eb("t.expires_at", "is", null), eb("t.expires_at", ">", sql<Date>`now()`)]),
    )
    .orderBy("t.created_at", "desc")
    .orderBy("t.id")
    .execute();
}

export async function findTokenSummary(
  db: Kysely<Database>,
  userId: string,
  id: string,
): Promise<TokenSummaryRow | undefined> {
  return summaryQuery(db).where("t.user_id", "=", userId).where("t.id", "=", id).executeTakeFirst();
}

/** A token's scope, when it belongs to the user. */
export async function findTokenScope(
  db: Kysely<Database>,
  userId: string,
  id: string,
): Promise<(TokenScope & { id: string; parentId: string | null; name: string }) | undefined> {
  const rows = await tokenScopes(db, (t) =>
    t.where("t.user_id", "=", userId).where("t.id", "=", id),
  );
  return rows[0];
}

async function tokenScopes(
  db: Kysely<Database>,
  filter: (query: ReturnType<typeof scopeQuery>) => ReturnType<typeof scopeQuery>,
) {
  const rows = await filter(scopeQuery(db)).execute();
  return rows.map((row) => ({
    id: row.id,
    parentId: row.parent_id,
    name: row.name,
    readOnly: row.read_only,
    adminOptIn: row.admin_opt_in,
    teamIds: row.team_restricted ? row.team_ids : null,
    expiresAt: row.expires_at,
  }));
}

function scopeQuery(db: Kysely<Database>) {
  return db
    .selectFrom("access_tokens as t")
    .select([
      "t.id",
      "t.parent_id",
      "t.name",
      "t.read_only",
      "t.admin_opt_in",
      "t.team_restricted",
      "t.expires_at",
      sql<
        string[]
      >`array(select a.team_id from access_token_teams a where a.token_id = t.id order by a.team_id)`.as(
        "team_ids",
      ),
    ]);
}

export async function insertToken(
  trx: Kysely<Database>,
  token: {
    userId: string;
    parentId: string | null;
    name: string;
    digest: string;
    scope: TokenScope;
  },
): Promise<AccessTokenRow> {
  const row = await trx
    .insertInto("access_tokens")
    .values({
      id: newId(),
      user_id: token.userId,
      parent_id: token.parentId,
      name: token.name,
      digest: token.digest,
      read_only: token.scope.readOnly,
      admin_opt_in: token.scope.adminOptIn,
      team_restricted: token.scope.teamIds !== null,
      expires_at: token.scope.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await insertTokenTeams(trx, row.id, token.scope.teamIds);
  return row;
}

async function insertTokenTeams(
  trx: Kysely<Database>,
  tokenId: string,
  teamIds: readonly string[] | null,
) {
  if (teamIds && teamIds.length > 0) {
    await trx
      .insertInto("access_token_teams")
      .values(teamIds.map((teamId) => ({ token_id: tokenId, team_id: teamId })))
      .execute();
  }
}

async function setTokenTeams(
  trx: Kysely<Database>,
  tokenId: string,
  teamIds: readonly string[] | null,
) {
  await trx.deleteFrom("access_token_teams").where("token_id", "=", tokenId).execute();
  await insertTokenTeams(trx, tokenId, teamIds);
}

/** Sets a token's name and scope. */
export async function updateToken(
  trx: Kysely<Database>,
  id: string,
  change: { name: string; scope: TokenScope },
): Promise<void> {
  await trx
    .updateTable("access_tokens")
    .set({
      name: change.name,
      read_only: change.scope.readOnly,
      admin_opt_in: change.scope.adminOptIn,
      team_restricted: change.scope.teamIds !== null,
      expires_at: change.scope.expiresAt,
    })
    .where("id", "=", id)
    .execute();
  await setTokenTeams(trx, id, change.scope.teamIds);
}

/** The tokens created with `id`, directly or through others, parents before children. */
export async function tokenDescendants(trx: Kysely<Database>, id: string) {
  const ids = await trx
    .withRecursive("tree(id, depth)", (qb) =>
      qb
        .selectFrom("access_tokens")
        .select(["id", sql<number>`1`.as("depth")])
        .where("parent_id", "=", id)
        .unionAll((q) =>
          q
            .selectFrom("access_tokens as c")
            .innerJoin("tree", "tree.id", "c.parent_id")
            .select(["c.id", sql<number>`tree.depth + 1`.as("depth")]),
        ),
    )
    .selectFrom("tree")
    .select(["id", "depth"])
    .orderBy("depth")
    .execute();
  if (ids.length === 0) return [];
  const scopes = await tokenScopes(trx, (q) =>
    q.where(
      "t.id",
      "in",
      ids.map((r) => r.id),
    ),
  );
  const order = new Map(ids.map((r, i) => [r.id, i]));
  return scopes.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
}

/** Deletes the token; the database deletes the tokens created with it (ON DELETE CASCADE). */
export async function deleteToken(trx: Kysely<Database>, id: string): Promise<boolean> {
  const rows = await trx.deleteFrom("access_tokens").where("id", "=", id).returning("id").execute();
  return rows.length > 0;
}

/** Deletes every token past its expiry; returns their ids and owners. */
export async function deleteExpiredTokens(
  db: Kysely<Database>,
): Promise<{ id: string; user_id: string; name: string }[]> {
  return db
    .deleteFrom("access_tokens")
    .where("expires_at", "<=", sql<Date>`now()`)
    .returning(["id", "user_id", "name"])
    .execute();
}

/** Records when tokens were last used: one statement for a whole batch. */
export async function touchTokens(
  db: Kysely<Database>,
  lastUsed: ReadonlyMap<string, Date>,
): Promise<void> {
  if (lastUsed.size === 0) return;
  const values = sql.join(
    [...lastUsed].map(([id, at]) => sql`(${id}, ${at.toISOString()}::timestamptz)`),
  );
  await sql`
    update access_tokens as t
    set last_used_at = greatest(t.last_used_at, v.at)
    from (values ${values}) as v(id, at)
    where t.id = v.id
  `.execute(db);
}

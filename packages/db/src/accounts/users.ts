// Users: lookups on the request path, the administrators' list, changes, and what deleting one takes.
import { type Kysely, sql } from "kysely";
import { compiledOnce } from "../compiled-once";
import { newId } from "../ids";
import { countUpTo, keysetPage, type PageRequest } from "../paging";
import type { Database, UserRow, UserUpdate } from "../schema";

/** Who a credential's row (a session's, a token's, joined with its user) says is calling. */
export function callerOf(row: {
  id: string;
  user_id: string;
  username: string;
  admin: boolean;
  suspended: boolean;
}) {
  return {
    id: row.id,
    userId: row.user_id,
    username: row.username,
    admin: row.admin,
    suspended: row.suspended,
  };
}

export async function findUser(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  const [row] = await userById(db, id);
  return row;
}

const userById = compiledOnce((db, id: string) =>
  db.selectFrom("users").selectAll().where("id", "=", id),
);

/** The user who signs in as `login`: a username or an email, in any case. */
export async function findUserByLogin(
  db: Kysely<Database>,
  login: string,
): Promise<UserRow | undefined> {
  const [row] = await userByLogin(db, login.toLowerCase());
  return row;
}

const userByLogin = compiledOnce((db, login: string) =>
  db
    .selectFrom("users")
    .selectAll()
    .where((eb) =>
      eb.or([
        eb(sql`lower(username)`, "=", login),
        eb.and([eb("email", "is not", null), eb(sql`lower(email)`, "=", login)]),
      ]),
    ),
);

export async function insertUser(
  db: Kysely<Database>,
  user: {
    username: string;
    name: string;
    email?: string | null;
    admin?: boolean;
    passwordHash?: string | null;
    passwordExpired?: boolean;
  },
): Promise<UserRow> {
  return db
    .insertInto("users")
    .values({
      id: newId(),
      username: user.username,
      name: user.name,
      email: user.email ?? null,
      admin: user.admin ?? false,
      password_hash: user.passwordHash ?? null,
      password_expired: user.passwordExpired ?? false,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateUser(
  db: Kysely<Database>,
  id: string,
  change: UserUpdate,
): Promise<UserRow | undefined> {
  return db
    .updateTable("users")
    .set({ ...change, updated_at: new Date() })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteUser(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom("users").where("id", "=", id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function countUsers(db: Kysely<Database>): Promise<number> {
  const { n } = await db
    .selectFrom("users")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * The administrators who can still act (not suspended), locked for the rest of the transaction so
 * that two requests cannot each remove a different last administrator.
 */
export async function activeAdminIds(trx: Kysely<Database>): Promise<string[]> {
  const rows = await trx
    .selectFrom("users")
    .select("id")
    .where("admin", "=", true)
    .where("suspended", "=", false)
    .orderBy("id")
    .forUpdate()
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Every user, oldest first, a page at a time; `query` matches username, name or email. `total`
 * counts the matching users up to `countCap`.
 */
export async function listUsers(
  db: Kysely<Database>,
  request: PageRequest & { query?: string },
  countCap: number,
): Promise<{ users: UserRow[]; total: number; nextCursor?: string }> {
  const pattern = request.query
    ? `%${request.query.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    : undefined;
  const matching = () => {
    let query = db.selectFrom("users");
    if (pattern !== undefined) {
      query = query.where((eb) =>
        eb.or([
          eb(sql`lower(username)`, "like", pattern),
          eb(sql`lower(name)`, "like", pattern),
          eb(sql`lower(coalesce(email, ''))`, "like", pattern),
        ]),
      );
    }
    return query;
  };
  const { rows: users, ...page } = await keysetPage(
    matching().selectAll(),
    countUpTo(db, matching(), countCap),
    { table: "users", key: "created_at" },
    request,
  );
  return { users, ...page };
}

/**
 * The teams `userId` owns with no other owner, with how many other members each has: what deleting
 * the user would leave ownerless.
 */
export async function soleOwnedTeams(
  db: Kysely<Database>,
  userId: string,
): Promise<{ id: string; name: string; slug: string; others: number }[]> {
  return db
    .selectFrom("team_members as m")
    .innerJoin("teams as t", "t.id", "m.team_id")
    .select([
      "t.id",
      "t.name",
      "t.slug",
      sql<number>`(select count(*)::int from team_members o where o.team_id = t.id and o.user_id <> ${userId})`.as(
        "others",
      ),
    ])
    .where("m.user_id", "=", userId)
    .where("m.role", ">=", 50)
    .where(
      sql<boolean>`not exists (select 1 from team_members o where o.team_id = t.id and o.user_id <> ${userId} and o.role >= 50)`,
    )
    .execute();
}

export async function deleteTeams(db: Kysely<Database>, ids: string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom("teams").where("id", "in", ids).execute();
}

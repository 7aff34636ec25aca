import type { Kysely } from "kysely";
import { compiledOnce } from "./compiled-once";
import { newId } from "./ids";
import type { Database, UserRow } from "./schema";

export async function findUser(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  const [row] = await userById(db, id);
  return row;
}

const userById = compiledOnce((db, id: string) =>
  db.selectFrom("users").selectAll().where("id", "=", id),
);

export async function insertUser(
  db: Kysely<Database>,
  user: { username: string; name: string; email?: string | null; admin?: boolean },
): Promise<UserRow> {
  return db
    .insertInto("users")
    .values({
      id: newId(),
      username: user.username,
      name: user.name,
      email: user.email ?? null,
      admin: user.admin ?? false,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function countUsers(db: Kysely<Database>): Promise<number> {
  const { n } = await db
    .selectFrom("users")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(n);
}

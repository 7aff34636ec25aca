// A team's applications, which hold its hosted instances.
import { type Kysely, sql } from "kysely";
import { newId } from "./ids";
import type { ApplicationRow, Database } from "./schema";

export async function insertApplication(
  db: Kysely<Database>,
  values: { teamId: string; name: string; description: string | null },
): Promise<ApplicationRow> {
  return db
    .insertInto("applications")
    .values({
      id: newId(),
      team_id: values.teamId,
      name: values.name,
      description: values.description,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findApplication(
  db: Kysely<Database>,
  id: string,
): Promise<ApplicationRow | undefined> {
  return db.selectFrom("applications").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function updateApplication(
  db: Kysely<Database>,
  id: string,
  change: { name?: string; description?: string | null },
): Promise<ApplicationRow | undefined> {
  return db
    .updateTable("applications")
    .set({ ...change, updated_at: sql`now()` })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteApplication(
  db: Kysely<Database>,
  id: string,
): Promise<ApplicationRow | undefined> {
  return db.deleteFrom("applications").where("id", "=", id).returningAll().executeTakeFirst();
}

/** The team's applications by name. */
export async function listTeamApplications(
  db: Kysely<Database>,
  teamId: string,
): Promise<ApplicationRow[]> {
  return db
    .selectFrom("applications")
    .selectAll()
    .where("team_id", "=", teamId)
    .orderBy("name")
    .orderBy("id")
    .execute();
}

/** The team an application belongs to (for the permission check). */
export async function teamOfApplication(
  db: Kysely<Database>,
  id: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom("applications")
    .select("team_id")
    .where("id", "=", id)
    .executeTakeFirst();
  return row?.team_id;
}

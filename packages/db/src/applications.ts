// A team's applications, which hold its hosted instances.
import { type Kysely, sql } from "kysely";
import { newId } from "./ids";
import type { ApplicationRow, Database } from "./schema";
import { listWhere, teamOfRow } from "./rows";

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
  return listWhere(db, "applications", { team_id: teamId }, ["name"]);
}

/** The team an application belongs to (for the permission check). */
export const teamOfApplication = teamOfRow("applications");

/**
 * How many of a team's hosted instances (`hosted`: the action under way, else the desired state)
 * or devices (`remote`: what the agent last reported, `""` before it ever did) are in each state,
 * as FlowFuse counts them.
 */
export async function countTeamInstancesByState(
  db: Kysely<Database>,
  teamId: string,
  kind: "hosted" | "remote",
  filter: { states?: readonly string[]; applicationId?: string },
): Promise<{ state: string; count: number }[]> {
  const state =
    kind === "hosted"
      ? sql<string>`coalesce(e.in_flight, e.state)`
      : sql<string>`coalesce(e.state, '')`;
  const table = kind === "hosted" ? sql`projects` : sql`devices`;
  const where = [sql`e.team_id = ${teamId}`];
  if (filter.applicationId !== undefined)
    where.push(sql`e.application_id = ${filter.applicationId}`);
  if (filter.states && filter.states.length > 0) {
    where.push(sql`${state} in (${sql.join(filter.states)})`);
  }
  const result = await sql<{ state: string; count: number }>`select ${state} as state,
      count(*)::int as count from ${table} e where ${sql.join(where, sql` and `)} group by 1`.execute(
    db,
  );
  return result.rows;
}

// Searching a team, as FlowFuse's search does: its applications whose name or description, its
// instances whose name, and its devices whose name or type contains the text in any case — and
// the one of each whose id it is. The text is a bound parameter and LIKE's wildcards in it match
// themselves (`%` finds a literal %).
import { type Kysely, type SelectQueryBuilder, sql } from "kysely";
import { type DeviceDetail, deviceDetailQuery } from "./devices";
import type { ProjectSummaryRow } from "./instances";
import { containing } from "./paging";
import type { ApplicationRow, Database } from "./schema";

// The three queries are of different tables: written once for any.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyQuery<O> = SelectQueryBuilder<any, any, O>;

export interface TeamSearchResults {
  applications: ApplicationRow[];
  instances: ProjectSummaryRow[];
  devices: DeviceDetail[];
}

/** What `text` finds in the team, by name, at most `limit` of each kind. */
export async function searchTeam(
  db: Kysely<Database>,
  teamId: string,
  text: string,
  limit: number,
  kinds: { applications: boolean } = { applications: true },
): Promise<TeamSearchResults> {
  const pattern = containing(text);
  /** The team's rows (columns prefixed `prefix`) whose id is the text or `columns` contain it. */
  const found = <O>(query: AnyQuery<O>, prefix: string, columns: string[]) => {
    const ref = (column: string) => sql.ref(`${prefix}${column}`);
    const contains = columns.map((column) => sql<boolean>`${ref(column)} ilike ${pattern}`);
    return query
      .where(ref("team_id"), "=", teamId)
      .where(sql<boolean>`(${ref("id")} = ${text} or ${sql.join(contains, sql` or `)})`)
      .orderBy(ref("name"))
      .orderBy(ref("id"))
      .limit(limit)
      .execute();
  };
  const applications = kinds.applications
    ? found(db.selectFrom("applications").selectAll(), "", ["name", "description"])
    : Promise.resolve([]);
  const instances = found(
    db
      .selectFrom("projects")
      .select(["id", "name", "application_id", "state", "in_flight", "created_at", "updated_at"]),
    "",
    ["name"],
  );
  const devices = found(deviceDetailQuery(db), "d.", ["name", "type"]) as Promise<DeviceDetail[]>;
  const [a, i, d] = await Promise.all([applications, instances, devices]);
  return { applications: a, instances: i, devices: d };
}

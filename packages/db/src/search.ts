// Searching a team, as FlowFuse's search does: its applications whose name or description, its
// instances whose name, and its devices whose name or type contains the text in any case — and
// the one of each whose id it is. The text is a bound parameter and LIKE's wildcards in it match
// themselves (`%` finds a literal %).
import type { Kysely } from "kysely";
import { type DeviceDetail, deviceDetailQuery } from "./devices";
import type { ProjectSummaryRow } from "./instances";
import { containing } from "./paging";
import type { ApplicationRow, Database } from "./schema";

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
  const applications = kinds.applications
    ? db
        .selectFrom("applications")
        .selectAll()
        .where("team_id", "=", teamId)
        .where((eb) =>
          eb.or([
            eb("id", "=", text),
            eb("name", "ilike", pattern),
            eb("description", "ilike", pattern),
          ]),
        )
        .orderBy("name")
        .orderBy("id")
        .limit(limit)
        .execute()
    : Promise.resolve([]);
  const instances = db
    .selectFrom("projects")
    .select(["id", "name", "application_id", "state", "in_flight", "created_at", "updated_at"])
    .where("team_id", "=", teamId)
    .where((eb) => eb.or([eb("id", "=", text), eb("name", "ilike", pattern)]))
    .orderBy("name")
    .orderBy("id")
    .limit(limit)
    .execute();
  const devices = deviceDetailQuery(db)
    .where("d.team_id", "=", teamId)
    .where((eb) =>
      eb.or([
        eb("d.id", "=", text),
        eb("d.name", "ilike", pattern),
        eb("d.type", "ilike", pattern),
      ]),
    )
    .orderBy("d.name")
    .orderBy("d.id")
    .limit(limit)
    .execute() as Promise<DeviceDetail[]>;
  const [a, i, d] = await Promise.all([applications, instances, devices]);
  return { applications: a, instances: i, devices: d };
}

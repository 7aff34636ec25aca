// Team types: the kinds of team administrators offer, with the limits their teams live within.
import { type Kysely, sql } from "kysely";
import { type ActiveFilter, entryTable } from "../entries";
import { type PageRequest } from "../paging";
import type { Database, TeamTypeRow } from "../schema";
import { countWhere } from "../rows";

/** A limit: null or absent is no limit. */
export interface TeamTypeLimit {
  limit?: number | null;
}

/** The shape `properties` is stored in (the API validates it on every write). */
export interface TeamTypeProperties {
  users?: TeamTypeLimit;
  instances?: TeamTypeLimit;
  devices?: TeamTypeLimit;
  teamBroker?: { clients: TeamTypeLimit };
  features?: Record<string, boolean | number | string>;
}

/** What a team shows of its type. */
export interface TeamTypeSummaryRow {
  id: string;
  name: string;
  active: boolean;
  order: number;
  description: string | null;
  properties: TeamTypeProperties;
}

/**
 * The type of the team whose `type_id` is in `typeIdColumn`, as one JSON column named `alias`: a
 * correlated lookup by primary key, so a team's query brings its type without a second round trip.
 */
export function teamTypeOf<A extends string = "type">(
  typeIdColumn = "teams.type_id",
  alias = "type" as A,
) {
  return sql<TeamTypeSummaryRow>`(select json_build_object('id', tt.id, 'name', tt.name, 'active', tt.active, 'order', tt."order", 'description', tt.description, 'properties', tt.properties) from team_types tt where tt.id = ${sql.ref(typeIdColumn)})`.as(
    alias,
  );
}

export type TeamTypeFilter = ActiveFilter;

const teamTypes = entryTable<"team_types", TeamTypeRow, TeamTypeValues>("team_types", {
  order: "order",
  json: ["properties"],
});

/** Team types by ascending `order` (then id), a page at a time; `cursor` is the last id seen. */
export async function listTeamTypes(
  db: Kysely<Database>,
  request: PageRequest & { filter: TeamTypeFilter },
): Promise<{ types: TeamTypeRow[]; total: number; nextCursor?: string }> {
  const { rows: types, ...page } = await teamTypes.list(db, request);
  return { types, ...page };
}

export const findTeamType = teamTypes.find;

/** The type a new team gets when none is chosen: the active type with the lowest `order`. */
export async function defaultTeamType(db: Kysely<Database>): Promise<TeamTypeRow | undefined> {
  return teamTypes.firstActive(db, ["order", "created_at"]);
}

export interface TeamTypeValues {
  name: string;
  description?: string | null;
  active?: boolean;
  order?: number;
  properties?: TeamTypeProperties;
}

export const insertTeamType = teamTypes.insert;
export const updateTeamType = teamTypes.update;

/**
 * Ids of the active types, their rows locked until the transaction ends: a change that could
 * leave no active type holds them, so two concurrent changes cannot each remove a different last
 * one.
 */
export async function lockActiveTeamTypes(trx: Kysely<Database>): Promise<string[]> {
  const rows = await trx
    .selectFrom("team_types")
    .select("id")
    .where("active", "=", true)
    .orderBy("id")
    .forUpdate()
    .execute();
  return rows.map((row) => row.id);
}

/** How many teams have this type. */
export async function teamTypeTeamCount(db: Kysely<Database>, id: string): Promise<number> {
  return countWhere(db, "teams", "type_id", id);
}

/**
 * Deletes the type. A team that has it makes this fail with a foreign-key violation (the
 * reference is ON DELETE RESTRICT), also when that team was created concurrently.
 */
export const deleteTeamType = teamTypes.delete;

/**
 * The limits and features of a team's type (undefined when the team does not exist): what adds
 * members, instances or devices reads before it does. A null or absent limit is no limit.
 */
export async function teamLimits(
  db: Kysely<Database>,
  teamId: string,
): Promise<TeamTypeProperties | undefined> {
  const row = await db
    .selectFrom("teams")
    .innerJoin("team_types as tt", "tt.id", "teams.type_id")
    .select("tt.properties")
    .where("teams.id", "=", teamId)
    .executeTakeFirst();
  return row?.properties as TeamTypeProperties | undefined;
}

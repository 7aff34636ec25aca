// Hosted instances: their rows, the one query that loads an instance with everything its view
// shows, the desired state and the action under way, the instance's token, and what its Node-RED
// stores through the storage routes.
import { randomUUID } from "node:crypto";
import { type Kysely, sql } from "kysely";
import type { Database, ProjectRow } from "./schema";
import type { EnvVar } from "./schema-instances";
import { countWhere, teamOfRow } from "./rows";

/** Whether the user owns at least one team (FlowFuse's condition for checking instance names). */
export async function userOwnsATeam(db: Kysely<Database>, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom("team_members")
    .select("team_id")
    .where("user_id", "=", userId)
    .where("role", ">=", 50)
    .executeTakeFirst();
  return row !== undefined;
}

/** The team an instance belongs to (for the permission check). */
export const teamOfProject = teamOfRow("projects");

// ---- Instances ----

/** An instance with what its view shows: application, team, type, stack, template. */
export interface ProjectDetail extends ProjectRow {
  application_name: string;
  application_description: string | null;
  team_name: string;
  team_slug: string;
  project_type_name: string;
  /** The instance type's properties (`palette.allowInstall: false` turns the palette off). */
  project_type_properties: Record<string, unknown>;
  stack_name: string;
  stack_label: string | null;
  stack_properties: Record<string, unknown>;
  stack_replaced_by: string | null;
  template_name: string;
  template_description: string | null;
  template_settings: Record<string, unknown>;
  template_policy: Record<string, unknown>;
  flows_updated_at: Date | null;
}

function detailQuery(db: Kysely<Database>) {
  return db
    .selectFrom("projects as p")
    .innerJoin("applications as a", "a.id", "p.application_id")
    .innerJoin("teams as t", "t.id", "p.team_id")
    .innerJoin("project_types as pt", "pt.id", "p.project_type_id")
    .innerJoin("project_stacks as s", "s.id", "p.stack_id")
    .innerJoin("project_templates as tp", "tp.id", "p.template_id")
    .leftJoin("project_storage as ps", "ps.project_id", "p.id")
    .selectAll("p")
    .select([
      "a.name as application_name",
      "a.description as application_description",
      "t.name as team_name",
      "t.slug as team_slug",
      "pt.name as project_type_name",
      "pt.properties as project_type_properties",
      "s.name as stack_name",
      "s.label as stack_label",
      "s.properties as stack_properties",
      "s.replaced_by as stack_replaced_by",
      "tp.name as template_name",
      "tp.description as template_description",
      "tp.settings as template_settings",
      "tp.policy as template_policy",
      "ps.flows_updated_at",
    ]);
}

export async function findProject(
  db: Kysely<Database>,
  id: string,
): Promise<ProjectDetail | undefined> {
  return detailQuery(db).where("p.id", "=", id).executeTakeFirst() as Promise<
    ProjectDetail | undefined
  >;
}

/** Instances by name, of an application, a team, or (for resuming them) in a desired state. */
export async function listProjects(
  db: Kysely<Database>,
  filter: { applicationId?: string; teamId?: string; state?: ProjectRow["state"] },
): Promise<ProjectDetail[]> {
  let query = detailQuery(db).orderBy("p.name");
  if (filter.applicationId) query = query.where("p.application_id", "=", filter.applicationId);
  if (filter.teamId) query = query.where("p.team_id", "=", filter.teamId);
  if (filter.state) query = query.where("p.state", "=", filter.state);
  return query.execute() as Promise<ProjectDetail[]>;
}

/** What a list of instances shows of each (its runtime state comes from the driver). */
export type ProjectSummaryRow = Pick<
  ProjectRow,
  "id" | "name" | "application_id" | "state" | "in_flight" | "created_at" | "updated_at"
>;

/**
 * A team's instances by name, as its applications' list shows them: the projects table alone, no
 * joins and none of the JSON columns an instance's own view needs (the detail query's six-way
 * join was most of what listing a team's applications cost the database and the server).
 */
export async function listTeamProjectSummaries(
  db: Kysely<Database>,
  teamId: string,
): Promise<ProjectSummaryRow[]> {
  return db
    .selectFrom("projects")
    .select(["id", "name", "application_id", "state", "in_flight", "created_at", "updated_at"])
    .where("team_id", "=", teamId)
    .orderBy("name")
    .execute();
}

export async function countTeamProjects(db: Kysely<Database>, teamId: string): Promise<number> {
  return countWhere(db, "projects", "team_id", teamId);
}

export async function countApplicationProjects(
  db: Kysely<Database>,
  applicationId: string,
): Promise<number> {
  return countWhere(db, "projects", "application_id", applicationId);
}

/** Whether an instance has the name, without regard to case (names are platform-wide). */
export async function projectNameTaken(
  db: Kysely<Database>,
  name: string,
  except?: string,
): Promise<boolean> {
  let query = db
    .selectFrom("projects")
    .select("id")
    .where(sql<string>`lower(name)`, "=", name.toLowerCase());
  if (except) query = query.where("id", "<>", except);
  return (await query.executeTakeFirst()) !== undefined;
}

/** The instance of that name, whatever its case (an editor's host name): its id. */
export async function findProjectIdByName(
  db: Kysely<Database>,
  name: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom("projects")
    .select("id")
    .where(sql<string>`lower(name)`, "=", name.toLowerCase())
    .executeTakeFirst();
  return row?.id;
}

export async function insertProject(
  db: Kysely<Database>,
  values: {
    name: string;
    applicationId: string;
    teamId: string;
    projectTypeId: string;
    stackId: string;
    templateId: string;
    env: EnvVar[];
    /** A runtime will start it: `starting` until it has. */
    starting: boolean;
  },
): Promise<ProjectRow> {
  const row = await db
    .insertInto("projects")
    .values({
      id: randomUUID(),
      name: values.name,
      application_id: values.applicationId,
      team_id: values.teamId,
      project_type_id: values.projectTypeId,
      stack_id: values.stackId,
      template_id: values.templateId,
      state: "running",
      in_flight: values.starting ? "starting" : null,
      in_flight_at: values.starting ? sql<Date>`now()` : null,
      settings: JSON.stringify({ env: values.env }),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await db.insertInto("project_storage").values({ project_id: row.id }).execute();
  return row;
}

export async function updateProject(
  db: Kysely<Database>,
  id: string,
  change: { name?: string; env?: EnvVar[] },
): Promise<ProjectRow | undefined> {
  return db
    .updateTable("projects")
    .set({
      ...(change.name !== undefined && { name: change.name }),
      ...(change.env !== undefined && {
        settings: sql`jsonb_set(settings, '{env}', ${JSON.stringify(change.env)}::jsonb)`,
      }),
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteProject(
  db: Kysely<Database>,
  id: string,
): Promise<ProjectRow | undefined> {
  return db.deleteFrom("projects").where("id", "=", id).returningAll().executeTakeFirst();
}

/** How long an action may stay "under way" before another may take over (its process died). */
export const STALE_ACTION_SECONDS = 300;

/**
 * Marks `action` as under way unless another one is: the one place where actions on an instance
 * are serialized, across every process of the platform. Returns the row, or undefined while
 * another action is under way (or the instance is gone).
 */
export async function claimProjectAction(
  db: Kysely<Database>,
  id: string,
  action: NonNullable<ProjectRow["in_flight"]>,
): Promise<ProjectRow | undefined> {
  return db
    .updateTable("projects")
    .set({ in_flight: action, in_flight_at: sql`now()` })
    .where("id", "=", id)
    .where((eb) =>
      eb.or([
        eb("in_flight", "is", null),
        eb("in_flight_at", "<", sql<Date>`now() - make_interval(secs => ${STALE_ACTION_SECONDS})`),
      ]),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Ends the action under way, recording the desired state it leaves. */
export async function finishProjectAction(
  db: Kysely<Database>,
  id: string,
  state: ProjectRow["state"],
): Promise<void> {
  await db
    .updateTable("projects")
    .set({ state, in_flight: null, in_flight_at: null })
    .where("id", "=", id)
    .execute();
}

/** The digest of the token the instance's Node-RED now holds (a new one for every start). */
export async function setProjectToken(
  db: Kysely<Database>,
  id: string,
  digest: string | null,
): Promise<void> {
  await db.updateTable("projects").set({ token_digest: digest }).where("id", "=", id).execute();
}

/** The instance a token of its own belongs to. */
export type InstanceOfToken = Pick<ProjectRow, "id" | "team_id" | "name">;

export async function findProjectByToken(
  db: Kysely<Database>,
  digest: string,
): Promise<InstanceOfToken | undefined> {
  return db
    .selectFrom("projects")
    .select(["id", "team_id", "name"])
    .where("token_digest", "=", digest)
    .executeTakeFirst();
}

// ---- What Node-RED stores ----

export type StorageKind = "flows" | "credentials" | "settings";

export async function findProjectStorage(
  db: Kysely<Database>,
  id: string,
  kind: StorageKind,
): Promise<unknown> {
  const row = await db
    .selectFrom("project_storage")
    .select(kind)
    .where("project_id", "=", id)
    .executeTakeFirst();
  return row?.[kind as keyof typeof row];
}

export async function writeProjectStorage(
  db: Kysely<Database>,
  id: string,
  kind: StorageKind,
  value: unknown,
): Promise<void> {
  await db
    .updateTable("project_storage")
    .set({
      [kind]: JSON.stringify(value),
      ...(kind === "flows" && { flows_updated_at: sql<Date>`now()` }),
    })
    .where("project_id", "=", id)
    .execute();
}

/**
 * The modules the instance's palette installed, as its Node-RED reported them: kept in its
 * settings (`palette.modules`), installed again at every start, carried by its snapshots.
 */
export async function setProjectPaletteModules(
  db: Kysely<Database>,
  id: string,
  modules: Record<string, string>,
): Promise<void> {
  await db
    .updateTable("projects")
    .set({
      settings: sql`jsonb_set(settings, '{palette}', coalesce(settings -> 'palette', '{}'::jsonb) || jsonb_build_object('modules', ${JSON.stringify(modules)}::jsonb))`,
    })
    .where("id", "=", id)
    .where(
      sql<boolean>`coalesce(settings #> '{palette,modules}', '{}'::jsonb) <> ${JSON.stringify(modules)}::jsonb`,
    )
    .execute();
}

/** The instance's library entries by key (`<type>/<path>`), each `{ meta, body }`. */
export async function listProjectLibraryEntries(
  db: Kysely<Database>,
  id: string,
): Promise<Record<string, { meta: Record<string, unknown>; body: string }>> {
  const row = await db
    .selectFrom("project_storage")
    .select("library")
    .where("project_id", "=", id)
    .executeTakeFirst();
  return row?.library ?? {};
}

export async function writeLibraryEntry(
  db: Kysely<Database>,
  id: string,
  key: string,
  entry: { meta: Record<string, unknown>; body: string },
): Promise<void> {
  await db
    .updateTable("project_storage")
    .set({
      library: sql`jsonb_set(library, ${sql.val([key])}::text[], ${JSON.stringify(entry)}::jsonb)`,
    })
    .where("project_id", "=", id)
    .execute();
}

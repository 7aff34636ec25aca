// Snapshots: taken, read (their summary in lists, their whole content for a deploy), renamed,
// deleted; listed newest first per owner (instance or device) or per application.
import { type Kysely, sql } from "kysely";
import { newId } from "./ids";
import type { Database, SnapshotRow } from "./schema";
import type { SnapshotSettings } from "./schema-instances";
import { teamOfRow } from "./rows";

/** The team a snapshot belongs to (for the permission check). */
export const teamOfSnapshot = teamOfRow("snapshots");

/** A snapshot as its views show it: no content, its owner's name and its author. */
export interface SnapshotSummaryRow extends Omit<
  SnapshotRow,
  "user_id" | "flows" | "settings" | "secrets"
> {
  modules: Record<string, string> | null;
  project_name: string | null;
  project_created_at: Date | null;
  project_updated_at: Date | null;
  device_name: string | null;
  user_id: string | null;
  user_username: string | null;
  user_name: string | null;
  user_admin: boolean | null;
  user_suspended: boolean | null;
  user_created_at: Date | null;
}

function summaryQuery(db: Kysely<Database>) {
  return db
    .selectFrom("snapshots as s")
    .leftJoin("projects as p", "p.id", "s.project_id")
    .leftJoin("devices as dv", "dv.id", "s.device_id")
    .leftJoin("users as u", "u.id", "s.user_id")
    .select([
      "s.id",
      "s.team_id",
      "s.application_id",
      "s.owner_type",
      "s.project_id",
      "s.device_id",
      "s.name",
      "s.description",
      "s.created_at",
      "s.updated_at",
      sql<Record<string, string> | null>`s.settings -> 'modules'`.as("modules"),
      "p.name as project_name",
      "p.created_at as project_created_at",
      "p.updated_at as project_updated_at",
      "dv.name as device_name",
      "u.id as user_id",
      "u.username as user_username",
      "u.name as user_name",
      "u.admin as user_admin",
      "u.suspended as user_suspended",
      "u.created_at as user_created_at",
    ]);
}

export async function findSnapshotSummary(
  db: Kysely<Database>,
  id: string,
): Promise<SnapshotSummaryRow | undefined> {
  return summaryQuery(db).where("s.id", "=", id).executeTakeFirst() as Promise<
    SnapshotSummaryRow | undefined
  >;
}

/** The whole snapshot: its content with its secrets still encrypted. */
export async function findSnapshot(
  db: Kysely<Database>,
  id: string,
): Promise<SnapshotRow | undefined> {
  return db.selectFrom("snapshots").selectAll().where("id", "=", id).executeTakeFirst();
}

export interface SnapshotOwnerFilter {
  projectId?: string;
  deviceId?: string;
  applicationId?: string;
}

/**
 * A page of snapshots, newest first: after the snapshot whose id is `cursor`, at most `limit`;
 * `total` counts them all. One index range scan per page (see the migration's indexes).
 */
export async function listSnapshots(
  db: Kysely<Database>,
  owner: SnapshotOwnerFilter,
  page: { limit: number; cursor?: string },
): Promise<{ rows: SnapshotSummaryRow[]; total: number; nextCursor?: string }> {
  const conditions = [
    owner.projectId !== undefined && sql`s.project_id = ${owner.projectId}`,
    owner.deviceId !== undefined && sql`s.device_id = ${owner.deviceId}`,
    owner.applicationId !== undefined && sql`s.application_id = ${owner.applicationId}`,
  ].filter((condition) => condition !== false);
  if (conditions.length === 0) throw new Error("listSnapshots needs an owner");
  const owned = sql<boolean>`${sql.join(conditions, sql` and `)}`;
  let rows = summaryQuery(db)
    .where(owned)
    .orderBy("s.created_at", "desc")
    .orderBy("s.id", "desc")
    .limit(page.limit + 1);
  if (page.cursor !== undefined) {
    rows = rows.where(
      sql<boolean>`(s.created_at, s.id) < (select c.created_at, c.id from snapshots c where c.id = ${page.cursor})`,
    );
  }
  const count = db
    .selectFrom("snapshots as s")
    .select(sql<number>`count(*)::int`.as("n"))
    .where(owned);
  const [found, total] = await Promise.all([rows.execute(), count.executeTakeFirstOrThrow()]);
  const more = found.length > page.limit;
  const pageRows = (more ? found.slice(0, page.limit) : found) as SnapshotSummaryRow[];
  return { rows: pageRows, total: total.n, nextCursor: more ? pageRows.at(-1)!.id : undefined };
}

export interface NewSnapshot {
  /** Given when the secrets were encrypted under a key derived from it. */
  id?: string;
  teamId: string;
  applicationId: string;
  owner: { type: "instance"; projectId: string } | { type: "device"; deviceId: string };
  name: string;
  description: string;
  userId: string | null;
  flows: unknown[];
  settings: SnapshotSettings;
  secrets: string | null;
}

export async function insertSnapshot(
  db: Kysely<Database>,
  snapshot: NewSnapshot,
): Promise<SnapshotRow> {
  return db
    .insertInto("snapshots")
    .values({
      id: snapshot.id ?? newId(),
      team_id: snapshot.teamId,
      application_id: snapshot.applicationId,
      owner_type: snapshot.owner.type,
      project_id: snapshot.owner.type === "instance" ? snapshot.owner.projectId : null,
      device_id: snapshot.owner.type === "device" ? snapshot.owner.deviceId : null,
      name: snapshot.name,
      description: snapshot.description,
      user_id: snapshot.userId,
      flows: JSON.stringify(snapshot.flows),
      settings: JSON.stringify(snapshot.settings),
      secrets: snapshot.secrets,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Name and description: the only things of a snapshot that change. */
export async function updateSnapshot(
  db: Kysely<Database>,
  id: string,
  change: { name?: string; description?: string },
): Promise<boolean> {
  const result = await db
    .updateTable("snapshots")
    .set({ ...change, updated_at: sql`now()` })
    .where("id", "=", id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteSnapshot(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom("snapshots").where("id", "=", id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Sets (or clears) the snapshot an instance's devices should run. */
export async function setProjectDeviceTarget(
  db: Kysely<Database>,
  projectId: string,
  snapshotId: string | null,
): Promise<void> {
  await db
    .updateTable("projects")
    .set({ device_target_snapshot_id: snapshotId })
    .where("id", "=", projectId)
    .execute();
}

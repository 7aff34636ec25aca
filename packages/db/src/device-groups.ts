// Device groups of an application: their rows with their member counts, and membership.
import { type Kysely, sql } from "kysely";
import { newId } from "./ids";
import type { Database, DeviceGroupRow } from "./schema";
import type { EnvVar } from "./schema-instances";

type Db = Kysely<Database>;

export interface DeviceGroupDetail extends DeviceGroupRow {
  device_count: number;
  target_name: string | null;
  target_description: string | null;
  target_created_at: Date | null;
  application_name: string;
  application_description: string | null;
}

function detailQuery(db: Db) {
  return db
    .selectFrom("device_groups as g")
    .innerJoin("applications as a", "a.id", "g.application_id")
    .leftJoin("snapshots as s", "s.id", "g.target_snapshot_id")
    .selectAll("g")
    .select([
      sql<number>`(select count(*)::int from devices d where d.group_id = g.id)`.as("device_count"),
      "s.name as target_name",
      "s.description as target_description",
      "s.created_at as target_created_at",
      "a.name as application_name",
      "a.description as application_description",
    ]);
}

/** The application's group (undefined when it is not the application's). */
export async function findDeviceGroup(
  db: Db,
  applicationId: string,
  id: string,
): Promise<DeviceGroupDetail | undefined> {
  return groupIn(db, "g.application_id", applicationId, id);
}

/** The team's group of that id, whichever its application (undefined when not the team's). */
export async function findTeamDeviceGroup(
  db: Db,
  teamId: string,
  id: string,
): Promise<DeviceGroupDetail | undefined> {
  return groupIn(db, "g.team_id", teamId, id);
}

/** The group of that id when its application or its team (`scope`) is `owner`. */
function groupIn(
  db: Db,
  scope: "g.application_id" | "g.team_id",
  owner: string,
  id: string,
): Promise<DeviceGroupDetail | undefined> {
  return detailQuery(db)
    .where(scope, "=", owner)
    .where("g.id", "=", id)
    .executeTakeFirst() as Promise<DeviceGroupDetail | undefined>;
}

/** A page of the application's (or the whole team's) groups by name, after the cursor's group. */
export async function listDeviceGroups(
  db: Db,
  of: { applicationId: string } | { teamId: string },
  request: { limit: number; cursor?: string; query?: string },
): Promise<{ rows: DeviceGroupDetail[]; total: number; nextCursor?: string }> {
  const scope =
    "applicationId" in of
      ? (["g.application_id", of.applicationId] as const)
      : (["g.team_id", of.teamId] as const);
  let rows = detailQuery(db).where(scope[0], "=", scope[1]);
  let count = db
    .selectFrom("device_groups as g")
    .select(sql<number>`count(*)::int`.as("n"))
    .where(scope[0], "=", scope[1]);
  if (request.query !== undefined) {
    const pattern = `%${request.query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    rows = rows.where("g.name", "ilike", pattern);
    count = count.where("g.name", "ilike", pattern);
  }
  if (request.cursor !== undefined) {
    rows = rows.where(
      sql<boolean>`(g.name, g.id) > (select c.name, c.id from device_groups c where c.id = ${request.cursor})`,
    );
  }
  const [found, total] = await Promise.all([
    rows
      .orderBy("g.name")
      .orderBy("g.id")
      .limit(request.limit + 1)
      .execute(),
    count.executeTakeFirstOrThrow(),
  ]);
  const more = found.length > request.limit;
  const page = (more ? found.slice(0, request.limit) : found) as DeviceGroupDetail[];
  return { rows: page, total: total.n, nextCursor: more ? page.at(-1)!.id : undefined };
}

export async function insertDeviceGroup(
  db: Db,
  values: { teamId: string; applicationId: string; name: string; description: string },
): Promise<DeviceGroupRow> {
  return db
    .insertInto("device_groups")
    .values({
      id: newId(),
      team_id: values.teamId,
      application_id: values.applicationId,
      name: values.name,
      description: values.description,
      settings: JSON.stringify({ env: [] }),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateDeviceGroup(
  db: Db,
  id: string,
  change: {
    name?: string;
    description?: string;
    targetSnapshotId?: string | null;
    env?: EnvVar[];
  },
): Promise<void> {
  await db
    .updateTable("device_groups")
    .set({
      ...(change.name !== undefined && { name: change.name }),
      ...(change.description !== undefined && { description: change.description }),
      ...(change.targetSnapshotId !== undefined && { target_snapshot_id: change.targetSnapshotId }),
      ...(change.env !== undefined && {
        settings: sql`jsonb_set(settings, '{env}', ${JSON.stringify(change.env)}::jsonb)`,
      }),
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .execute();
}

export async function deleteDeviceGroup(db: Db, id: string): Promise<void> {
  await db.deleteFrom("device_groups").where("id", "=", id).execute();
}

/** Puts devices in a group (or out of any: null). */
export async function setDevicesGroup(
  db: Db,
  deviceIds: readonly string[],
  groupId: string | null,
): Promise<void> {
  if (deviceIds.length === 0) return;
  await db
    .updateTable("devices")
    .set({ group_id: groupId, updated_at: sql`now()` })
    .where("id", "in", deviceIds)
    .execute();
}

/** The ids of the group's members. */
export async function groupMemberIds(db: Db, groupId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("devices")
    .select("id")
    .where("group_id", "=", groupId)
    .execute();
  return rows.map((row) => row.id);
}

/** Sets a device's settings hash (its variables or its group's changed). */
export async function setSettingsHash(db: Db, deviceId: string, hash: string): Promise<void> {
  await db.updateTable("devices").set({ settings_hash: hash }).where("id", "=", deviceId).execute();
}

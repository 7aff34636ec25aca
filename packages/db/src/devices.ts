// Remote devices: their rows, the one query that loads a device with what its view shows, lists by
// team or application with FlowFuse's search, sort and paging, credentials, and the live
// protocol's look-up by token. The team's provisioning tokens are device-provisioning-tokens.ts.
import { type Kysely, sql } from "kysely";
import { newId } from "./ids";
import type { Database, DeviceRow } from "./schema";
import type { EnvVar } from "./schema-instances";
import { countWhere, teamOfRow } from "./rows";

type Db = Kysely<Database>;

/** The team a device belongs to (for the permission check). */
export const teamOfDevice = teamOfRow("devices");

/**
 * The snapshot a device should run, over a `devices` row aliased `d`: the snapshot a rollout's wave
 * gives it while the rollout runs; else a group member follows its group's target when the group
 * has one; an instance's device the instance's device target when it has one; else (and for any
 * other device) its own.
 */
export const effectiveTarget = sql<string | null>`coalesce(d.rollout_snapshot_id,
  (select g2.target_snapshot_id from device_groups g2 where g2.id = d.group_id),
  (select p2.device_target_snapshot_id from projects p2 where p2.id = d.project_id),
  d.target_snapshot_id)`;

/** A device with what its view shows: team, application, instance, target and active snapshot. */
export interface DeviceDetail extends DeviceRow {
  target_id: string | null;
  target_name: string | null;
  target_description: string | null;
  target_created_at: Date | null;
  active_name: string | null;
  active_description: string | null;
  active_created_at: Date | null;
  group_name: string | null;
  group_description: string | null;
  group_settings: { env?: EnvVar[] } | null;
  group_target_snapshot_id: string | null;
  team_name: string;
  team_slug: string;
  application_name: string | null;
  application_description: string | null;
  project_name: string | null;
  project_application_id: string | null;
  project_created_at: Date | null;
  project_updated_at: Date | null;
}

function detailQuery(db: Db) {
  return (
    db
      .selectFrom("devices as d")
      .innerJoin("teams as t", "t.id", "d.team_id")
      .leftJoin("applications as a", "a.id", "d.application_id")
      .leftJoin("projects as p", "p.id", "d.project_id")
      .leftJoin("snapshots as ts", (join) => join.on(sql<boolean>`ts.id = ${effectiveTarget}`))
      // What the device reports it runs, when it is a snapshot of its team's (a device names it).
      .leftJoin("snapshots as acs", (join) =>
        join.onRef("acs.id", "=", "d.active_snapshot_id").onRef("acs.team_id", "=", "d.team_id"),
      )
      .leftJoin("device_groups as g", "g.id", "d.group_id")
      .selectAll("d")
      .select([
        "ts.id as target_id",
        "ts.name as target_name",
        "ts.description as target_description",
        "ts.created_at as target_created_at",
        "acs.name as active_name",
        "acs.description as active_description",
        "acs.created_at as active_created_at",
        "g.name as group_name",
        "g.description as group_description",
        "g.settings as group_settings",
        "g.target_snapshot_id as group_target_snapshot_id",
        "t.name as team_name",
        "t.slug as team_slug",
        "a.name as application_name",
        "a.description as application_description",
        "p.name as project_name",
        "p.application_id as project_application_id",
        "p.created_at as project_created_at",
        "p.updated_at as project_updated_at",
      ])
  );
}

export async function findDevice(db: Db, id: string): Promise<DeviceDetail | undefined> {
  return detailQuery(db).where("d.id", "=", id).executeTakeFirst() as Promise<
    DeviceDetail | undefined
  >;
}

/** The devices of these ids that exist, by name (then id). */
export async function listDevicesByIds(db: Db, ids: readonly string[]): Promise<DeviceDetail[]> {
  if (ids.length === 0) return [];
  return detailQuery(db)
    .where("d.id", "in", ids)
    .orderBy("d.name")
    .orderBy("d.id")
    .execute() as Promise<DeviceDetail[]>;
}

export interface NewDevice {
  teamId: string;
  name: string;
  type: string;
  applicationId: string | null;
  projectId: string | null;
  tokenDigest: string;
  /** The one-time code's digest and when it stops working (none: the device gets no code). */
  otc: DeviceOtc | null;
  credentialSecret: string;
  settingsHash: string;
  /** The digest of its MQTT password. */
  brokerPasswordDigest: string;
}

/** A one-time code as kept: its digest and when it stops working. */
export interface DeviceOtc {
  digest: string;
  expiresAt: Date;
}

export async function insertDevice(db: Db, values: NewDevice): Promise<DeviceRow> {
  return db
    .insertInto("devices")
    .values({
      id: newId(),
      team_id: values.teamId,
      name: values.name,
      type: values.type,
      application_id: values.applicationId,
      project_id: values.projectId,
      token_digest: values.tokenDigest,
      otc_digest: values.otc?.digest ?? null,
      otc_expires_at: values.otc?.expiresAt ?? null,
      credential_secret: values.credentialSecret,
      broker_password_digest: values.brokerPasswordDigest,
      settings: JSON.stringify({ env: [] }),
      settings_hash: values.settingsHash,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface DeviceChange {
  name?: string;
  type?: string;
  applicationId?: string | null;
  projectId?: string | null;
  targetSnapshotId?: string | null;
  env?: EnvVar[];
  settingsHash?: string;
  groupId?: string | null;
}

export async function updateDevice(
  db: Db,
  id: string,
  change: DeviceChange,
): Promise<DeviceRow | undefined> {
  return db
    .updateTable("devices")
    .set({
      ...(change.name !== undefined && { name: change.name }),
      ...(change.type !== undefined && { type: change.type }),
      ...(change.applicationId !== undefined && { application_id: change.applicationId }),
      ...(change.projectId !== undefined && { project_id: change.projectId }),
      ...(change.targetSnapshotId !== undefined && {
        target_snapshot_id: change.targetSnapshotId,
      }),
      ...(change.env !== undefined && {
        settings: sql`jsonb_set(settings, '{env}', ${JSON.stringify(change.env)}::jsonb)`,
      }),
      ...(change.settingsHash !== undefined && { settings_hash: change.settingsHash }),
      ...(change.groupId !== undefined && { group_id: change.groupId }),
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

/** New credentials: the old token and one-time code stop working at once. */
export async function setDeviceCredentials(
  db: Db,
  id: string,
  credentials: {
    tokenDigest: string;
    otc: DeviceOtc | null;
    credentialSecret: string;
    brokerPasswordDigest: string;
  },
): Promise<DeviceRow | undefined> {
  return db
    .updateTable("devices")
    .set({
      token_digest: credentials.tokenDigest,
      otc_digest: credentials.otc?.digest ?? null,
      otc_expires_at: credentials.otc?.expiresAt ?? null,
      credential_secret: credentials.credentialSecret,
      broker_password_digest: credentials.brokerPasswordDigest,
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirst();
}

/**
 * A device set up with its one-time code: in one statement the code is used up and the device
 * gets new credentials (its old token stops working). Of two uses of one code, only the first
 * finds it; an unknown, used or expired code changes nothing (undefined).
 */
export async function setUpDeviceWithOtc(
  db: Db,
  otcDigest: string,
  credentials: { tokenDigest: string; credentialSecret: string; brokerPasswordDigest: string },
): Promise<DeviceRow | undefined> {
  return db
    .updateTable("devices")
    .set({
      token_digest: credentials.tokenDigest,
      otc_digest: null,
      otc_expires_at: null,
      credential_secret: credentials.credentialSecret,
      broker_password_digest: credentials.brokerPasswordDigest,
      updated_at: sql`now()`,
    })
    .where("otc_digest", "=", otcDigest)
    .where("otc_expires_at", ">", sql<Date>`now()`)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteDevice(db: Db, id: string): Promise<DeviceRow | undefined> {
  return db.deleteFrom("devices").where("id", "=", id).returningAll().executeTakeFirst();
}

/** Deletes the team's devices of these ids (another team's are left alone); the ones deleted. */
export async function deleteTeamDevices(
  db: Db,
  teamId: string,
  ids: readonly string[],
): Promise<{ id: string; name: string }[]> {
  if (ids.length === 0) return [];
  return db
    .deleteFrom("devices")
    .where("team_id", "=", teamId)
    .where("id", "in", ids)
    .returning(["id", "name"])
    .execute();
}

export async function countTeamDevices(db: Db, teamId: string): Promise<number> {
  return countWhere(db, "devices", "team_id", teamId);
}

export type DeviceSort = "name" | "type" | "lastSeenAt" | "state" | "createdAt";

export interface DeviceListRequest {
  limit: number;
  cursor?: string;
  query?: string;
  sort?: DeviceSort;
  dir?: "asc" | "desc";
}

/** The sort key as a non-null expression over alias `x`, so that the row comparison is total. */
function sortKey(sort: DeviceSort, alias: string) {
  const column = sql.ref(
    `${alias}.${{ name: "name", type: "type", lastSeenAt: "last_seen_at", state: "state", createdAt: "created_at" }[sort]}`,
  );
  if (sort === "lastSeenAt") return sql`coalesce(${column}, '-infinity'::timestamptz)`;
  if (sort === "state") return sql`coalesce(${column}, '')`;
  return sql`${column}`;
}

/** Whose devices a list holds: a team's, an application's, an instance's, a group's, or all. */
export type DeviceScope =
  | { teamId: string }
  | { applicationId: string }
  | { projectId: string }
  | { groupId: string }
  | "platform";

/**
 * A page of a team's (or an application's, an instance's, a group's, the platform's) devices in
 * the order asked, after the cursor's device (its key read in the same statement), with the count
 * of every match.
 */
export async function listDevices(
  db: Db,
  of: DeviceScope,
  request: DeviceListRequest,
): Promise<{ rows: DeviceDetail[]; total: number; nextCursor?: string }> {
  const sort = request.sort ?? "name";
  const desc = request.dir === "desc";
  const key = sortKey(sort, "d");
  let rows = detailQuery(db);
  let count = db.selectFrom("devices as d").select(sql<number>`count(*)::int`.as("n"));
  if (of !== "platform") {
    const scope =
      "teamId" in of
        ? (["d.team_id", of.teamId] as const)
        : "applicationId" in of
          ? (["d.application_id", of.applicationId] as const)
          : "groupId" in of
            ? (["d.group_id", of.groupId] as const)
            : (["d.project_id", of.projectId] as const);
    rows = rows.where(scope[0], "=", scope[1]);
    count = count.where(scope[0], "=", scope[1]);
  }
  if (request.query !== undefined) {
    const pattern = `%${request.query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    rows = rows.where((eb) =>
      eb.or([eb("d.name", "ilike", pattern), eb("d.type", "ilike", pattern)]),
    );
    count = count.where((eb) =>
      eb.or([eb("d.name", "ilike", pattern), eb("d.type", "ilike", pattern)]),
    );
  }
  if (request.cursor !== undefined) {
    const cursorKey = sortKey(sort, "c");
    rows = rows.where(
      sql<boolean>`(${key}, d.id) ${sql.raw(desc ? "<" : ">")} (select ${cursorKey}, c.id from devices c where c.id = ${request.cursor})`,
    );
  }
  const ordered = rows
    .orderBy(key, desc ? "desc" : "asc")
    .orderBy("d.id", desc ? "desc" : "asc")
    .limit(request.limit + 1);
  const [found, total] = await Promise.all([ordered.execute(), count.executeTakeFirstOrThrow()]);
  const more = found.length > request.limit;
  const page = (more ? found.slice(0, request.limit) : found) as DeviceDetail[];
  return { rows: page, total: total.n, nextCursor: more ? page.at(-1)!.id : undefined };
}

// ---- The live protocol ----

/** The device a live request's token belongs to, when it is the device the path names. */
export async function findDeviceByToken(
  db: Db,
  id: string,
  tokenDigest: string,
): Promise<DeviceDetail | undefined> {
  return detailQuery(db)
    .where("d.id", "=", id)
    .where("d.token_digest", "=", tokenDigest)
    .executeTakeFirst() as Promise<DeviceDetail | undefined>;
}

/** The query that loads devices with what their view shows (the search's too, search.ts). */
export { detailQuery as deviceDetailQuery };

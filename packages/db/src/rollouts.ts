// Rollouts and their devices: created with their plan in one statement each, read with the names
// their view shows, listed by application or group a page at a time, and moved on by the runner
// (apps/api/src/rollouts/runner.ts), which holds a rollout's row locked while it decides.
import { type Kysely, sql } from "kysely";
import { newId } from "./ids";
import type { Database, RolloutDeviceRow, RolloutRow } from "./schema";
import type { RolloutWaveSpecJson } from "./schema-rollouts";
import { teamOfRow } from "./rows";

type Db = Kysely<Database>;

export type { RolloutWaveSpecJson };

/** The team a rollout belongs to (for the permission check). */
export const teamOfRollout = teamOfRow("rollouts");

/** The states a rollout is still under way in. */
export const ACTIVE_ROLLOUT_STATES = [
  "scheduled",
  "running",
  "paused",
  "waiting_approval",
] as const;

/** A rollout with the names its view shows. */
export interface RolloutDetail extends RolloutRow {
  application_name: string;
  created_by_username: string | null;
}

/** A rollout's device with its name. */
export interface RolloutDeviceDetail extends RolloutDeviceRow {
  device_name: string;
}

/** Devices written in one statement at most. */
const INSERT_BATCH = 1000;

export interface NewRollout {
  teamId: string;
  applicationId: string;
  deviceGroup: { id: string; name: string } | null;
  snapshot: { id: string; name: string };
  state: "scheduled" | "running";
  waves: RolloutWaveSpecJson[];
  soakSeconds: number;
  reportTimeoutSeconds: number;
  maxFailures: number;
  requireApproval: boolean;
  startAt: Date | null;
  createdBy: string | null;
}

export interface NewRolloutDevice {
  deviceId: string;
  wave: number;
  runs: { id: string; name: string } | null;
  previous: { id: string; name: string } | null;
}

export async function insertRollout(
  db: Db,
  values: NewRollout,
  devices: readonly NewRolloutDevice[],
): Promise<string> {
  const id = newId();
  await db
    .insertInto("rollouts")
    .values({
      id,
      team_id: values.teamId,
      application_id: values.applicationId,
      device_group_id: values.deviceGroup?.id ?? null,
      device_group_name: values.deviceGroup?.name ?? null,
      snapshot_id: values.snapshot.id,
      snapshot_name: values.snapshot.name,
      state: values.state,
      waves: JSON.stringify(values.waves),
      soak_seconds: values.soakSeconds,
      report_timeout_seconds: values.reportTimeoutSeconds,
      max_failures: values.maxFailures,
      require_approval: values.requireApproval,
      start_at: values.startAt,
      wave_times: JSON.stringify([]),
      created_by: values.createdBy,
    })
    .execute();
  // In batches: a statement's parameters are bounded (65,535), a group's devices are not.
  for (let start = 0; start < devices.length; start += INSERT_BATCH) {
    await db
      .insertInto("rollout_devices")
      .values(
        devices.slice(start, start + INSERT_BATCH).map((device, i) => ({
          position: start + i,
          rollout_id: id,
          device_id: device.deviceId,
          wave: device.wave,
          runs_id: device.runs?.id ?? null,
          runs_name: device.runs?.name ?? null,
          previous_id: device.previous?.id ?? null,
          previous_name: device.previous?.name ?? null,
        })),
      )
      .execute();
  }
  return id;
}

function rolloutQuery(db: Db) {
  return db
    .selectFrom("rollouts as r")
    .innerJoin("applications as a", "a.id", "r.application_id")
    .leftJoin("users as u", "u.id", "r.created_by")
    .selectAll("r")
    .select(["a.name as application_name", "u.username as created_by_username"]);
}

/**
 * The rollout of that id; `lock`: its row held until the transaction ends, waiting for another
 * holder (`wait`) or not (`skip-locked`: undefined when another holds it).
 */
export async function findRollout(
  db: Db,
  id: string,
  lock: "none" | "wait" | "skip-locked" = "none",
): Promise<RolloutDetail | undefined> {
  if (lock !== "none") {
    const query = db.selectFrom("rollouts").select("id").where("id", "=", id).forUpdate();
    const locked = await (lock === "skip-locked" ? query.skipLocked() : query).executeTakeFirst();
    if (!locked) return undefined;
  }
  return rolloutQuery(db).where("r.id", "=", id).executeTakeFirst() as Promise<
    RolloutDetail | undefined
  >;
}

/** A rollout's devices with their names, by wave and position. */
export async function rolloutDevices(db: Db, rolloutId: string): Promise<RolloutDeviceDetail[]> {
  return db
    .selectFrom("rollout_devices as rd")
    .innerJoin("devices as d", "d.id", "rd.device_id")
    .selectAll("rd")
    .select("d.name as device_name")
    .where("rd.rollout_id", "=", rolloutId)
    .orderBy("rd.wave")
    .orderBy("rd.position")
    .execute();
}

/** How many devices each rollout has, and in how many waves. */
async function rolloutCounts(db: Db, ids: readonly string[]) {
  if (ids.length === 0) {
    return new Map<string, { devices: number; waves: number; failures: number }>();
  }
  const rows = await db
    .selectFrom("rollout_devices")
    .select([
      "rollout_id",
      sql<number>`count(*)::int`.as("devices"),
      sql<number>`count(distinct wave)::int`.as("waves"),
      sql<number>`(count(*) filter (where failed_at is not null))::int`.as("failures"),
    ])
    .where("rollout_id", "in", ids)
    .groupBy("rollout_id")
    .execute();
  return new Map(rows.map((row) => [row.rollout_id, row]));
}

export interface RolloutListRow extends RolloutDetail {
  device_count: number;
  wave_count: number;
  failure_count: number;
}

/** A page of an application's (or a group's) rollouts, newest first, after the cursor's. */
export async function listRollouts(
  db: Db,
  of: { applicationId: string; groupId?: string },
  request: { limit: number; cursor?: string; state?: string },
): Promise<{ rows: RolloutListRow[]; total: number; nextCursor?: string }> {
  let rows = rolloutQuery(db).where("r.application_id", "=", of.applicationId);
  let count = db
    .selectFrom("rollouts as r")
    .select(sql<number>`count(*)::int`.as("n"))
    .where("r.application_id", "=", of.applicationId);
  if (of.groupId !== undefined) {
    rows = rows.where("r.device_group_id", "=", of.groupId);
    count = count.where("r.device_group_id", "=", of.groupId);
  }
  if (request.state !== undefined) {
    rows = rows.where("r.state", "=", request.state);
    count = count.where("r.state", "=", request.state);
  }
  if (request.cursor !== undefined) {
    rows = rows.where(
      sql<boolean>`(r.created_at, r.id) < (select c.created_at, c.id from rollouts c where c.id = ${request.cursor})`,
    );
  }
  const [found, total] = await Promise.all([
    rows
      .orderBy("r.created_at", "desc")
      .orderBy("r.id", "desc")
      .limit(request.limit + 1)
      .execute(),
    count.executeTakeFirstOrThrow(),
  ]);
  const more = found.length > request.limit;
  const page = (more ? found.slice(0, request.limit) : found) as RolloutDetail[];
  const counts = await rolloutCounts(
    db,
    page.map((row) => row.id),
  );
  return {
    rows: page.map((row) => ({
      ...row,
      device_count: counts.get(row.id)?.devices ?? 0,
      wave_count: counts.get(row.id)?.waves ?? 0,
      failure_count: counts.get(row.id)?.failures ?? 0,
    })),
    total: total.n,
    nextCursor: more ? page.at(-1)!.id : undefined,
  };
}

/** The ids of the rollouts under way (every process's runner looks at them). */
export async function activeRolloutIds(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom("rollouts")
    .select("id")
    .where("state", "in", [...ACTIVE_ROLLOUT_STATES])
    .orderBy("created_at")
    .execute();
  return rows.map((row) => row.id);
}

/** Of these devices, those in a rollout under way, with that rollout's id. */
export async function devicesInActiveRollouts(
  db: Db,
  deviceIds: readonly string[],
): Promise<{ device_id: string; rollout_id: string }[]> {
  if (deviceIds.length === 0) return [];
  return db
    .selectFrom("rollout_devices as rd")
    .innerJoin("rollouts as r", "r.id", "rd.rollout_id")
    .select(["rd.device_id", "rd.rollout_id"])
    .where("rd.device_id", "in", deviceIds)
    .where("r.state", "in", [...ACTIVE_ROLLOUT_STATES])
    .execute();
}

/** The rollout under way of a group, if any. */
export async function activeRolloutOfGroup(db: Db, groupId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("rollouts")
    .select("id")
    .where("device_group_id", "=", groupId)
    .where("state", "in", [...ACTIVE_ROLLOUT_STATES])
    .executeTakeFirst();
  return row?.id;
}

export type RolloutChange = Partial<
  Pick<
    RolloutRow,
    "state" | "reason" | "current_wave" | "approved_wave" | "finished_at" | "wave_times"
  >
>;

export async function updateRollout(db: Db, id: string, change: RolloutChange): Promise<void> {
  const { wave_times: times, ...rest } = change;
  await db
    .updateTable("rollouts")
    .set({
      ...rest,
      ...(times !== undefined && { wave_times: JSON.stringify(times) }),
      updated_at: sql`now()`,
    })
    .where("id", "=", id)
    .execute();
}

export type RolloutDeviceChange = Partial<
  Pick<
    RolloutDeviceRow,
    "state" | "reason" | "deployed_at" | "soak_started_at" | "healthy_at" | "failed_at" | "starts"
  >
>;

export async function updateRolloutDevice(
  db: Db,
  rolloutId: string,
  deviceId: string,
  change: RolloutDeviceChange,
): Promise<void> {
  await db
    .updateTable("rollout_devices")
    .set(change)
    .where("rollout_id", "=", rolloutId)
    .where("device_id", "=", deviceId)
    .execute();
}

/** Gives devices a rollout's snapshot over their targets (null: their own targets again). */
export async function setRolloutSnapshot(
  db: Db,
  deviceIds: readonly string[],
  snapshotId: string | null,
): Promise<void> {
  if (deviceIds.length === 0) return;
  await db
    .updateTable("devices")
    .set({ rollout_snapshot_id: snapshotId, updated_at: sql`now()` })
    .where("id", "in", deviceIds)
    .execute();
}

/**
 * Sets devices' own targets (a rollout to devices named one by one, succeeded): those still of the
 * snapshot's application (one moved away meanwhile keeps its new home's).
 */
export async function setDevicesTarget(
  db: Db,
  deviceIds: readonly string[],
  snapshotId: string,
  applicationId: string,
): Promise<void> {
  if (deviceIds.length === 0) return;
  await db
    .updateTable("devices")
    .set({ target_snapshot_id: snapshotId, updated_at: sql`now()` })
    .where("id", "in", deviceIds)
    .where("application_id", "=", applicationId)
    .execute();
}

/**
 * Holds an application's row until the transaction ends: rollouts are created (and a group's
 * target changed) one at a time per application, so two cannot take the same devices.
 */
export async function lockApplication(db: Db, applicationId: string): Promise<void> {
  await db
    .selectFrom("applications")
    .select("id")
    .where("id", "=", applicationId)
    .forUpdate()
    .execute();
}

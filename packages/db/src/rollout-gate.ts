// What a rollout's gate reads and what the reports of a device it watches write: the devices'
// reports each step reads, a device's place in the rollout that watches it, its flows' starts
// counted, and a device failed with its reason (the agent's crash reports, the flows' errors).
import { type Kysely, sql } from "kysely";
import { recordAudit } from "./audit-log/index";
import { ACTIVE_ROLLOUT_STATES } from "./rollouts";
import type { Database, RolloutDeviceRow } from "./schema";

type Db = Kysely<Database>;

/** What the gate reads of a device each tick: what it runs and its state. */
export async function devicesReports(
  db: Db,
  deviceIds: readonly string[],
): Promise<
  {
    id: string;
    state: string | null;
    active_snapshot_id: string | null;
    rollout_snapshot_id: string | null;
  }[]
> {
  if (deviceIds.length === 0) return [];
  return db
    .selectFrom("devices")
    .select(["id", "state", "active_snapshot_id", "rollout_snapshot_id"])
    .where("id", "in", deviceIds)
    .execute();
}

/**
 * A device's place in the rollouts it is being deployed or soaked by (at most one under way): what
 * its agent's and its flows' reports go to.
 */
export async function watchedRolloutDevice(
  db: Db,
  deviceId: string,
  rolloutId?: string,
): Promise<(RolloutDeviceRow & { snapshot_id: string | null }) | undefined> {
  let query = db
    .selectFrom("rollout_devices as rd")
    .innerJoin("rollouts as r", "r.id", "rd.rollout_id")
    .selectAll("rd")
    .select("r.snapshot_id")
    .where("rd.device_id", "=", deviceId)
    .where("rd.state", "in", ["deploying", "soaking"])
    .where("r.state", "in", [...ACTIVE_ROLLOUT_STATES]);
  if (rolloutId !== undefined) query = query.where("rd.rollout_id", "=", rolloutId);
  return query.executeTakeFirst();
}

/**
 * Fails a device a rollout is deploying or soaking (none: nothing happens), with the reason, and
 * logs `application.rollout.device-failed` in the rollout's application's log: what the agent's
 * and the flows' reports do; the rollout's runner acts on it at its next step. Answers whether it
 * failed one.
 */
export async function failWatchedRolloutDevice(
  db: Db,
  deviceId: string,
  reason: string,
  rolloutId?: string,
): Promise<boolean> {
  const watched = await watchedRolloutDevice(db, deviceId, rolloutId);
  if (!watched) return false;
  const failed = await db
    .updateTable("rollout_devices")
    .set({ state: "failed", reason, failed_at: sql`now()` })
    .where("rollout_id", "=", watched.rollout_id)
    .where("device_id", "=", deviceId)
    .where("state", "in", ["deploying", "soaking"])
    .returning("device_id")
    .executeTakeFirst();
  if (!failed) return false;
  const rollout = await db
    .selectFrom("rollouts as r")
    .innerJoin("devices as d", (join) => join.on("d.id", "=", deviceId))
    .select(["r.id", "r.team_id", "r.application_id", "d.name"])
    .where("r.id", "=", watched.rollout_id)
    .executeTakeFirstOrThrow();
  await recordAudit(db, {
    event: "application.rollout.device-failed",
    entity: { type: "application", id: rollout.application_id },
    teamId: rollout.team_id,
    actor: "system",
    body: { rollout: { id: rollout.id }, device: { id: deviceId, name: rollout.name }, reason },
  });
  return true;
}

/** A start of a watched device's flows counted; answers how many since it was deployed. */
export async function countRolloutStart(
  db: Db,
  rolloutId: string,
  deviceId: string,
): Promise<number> {
  const row = await db
    .updateTable("rollout_devices")
    .set({ starts: sql`starts + 1` })
    .where("rollout_id", "=", rolloutId)
    .where("device_id", "=", deviceId)
    .returning("starts")
    .executeTakeFirst();
  return row?.starts ?? 0;
}

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
 * and the flows' reports do; the rollout's runner acts on it at its next step. The rollout's row is
 * held meanwhile, as the runner and owners' actions hold it: a step under way ends first, and one
 * that follows sees the failure. `runningIt`: only when the device reports running the rollout's
 * snapshot (a crash of what it ran before is not the rollout's). Answers whether it failed one.
 */
export async function failWatchedRolloutDevice(
  db: Db,
  deviceId: string,
  reason: string,
  options: { rolloutId?: string; runningIt?: boolean } = {},
): Promise<boolean> {
  const first = await watchedRolloutDevice(db, deviceId, options.rolloutId);
  if (!first) return false;
  return db.transaction().execute(async (trx) => {
    await trx
      .selectFrom("rollouts")
      .select("id")
      .where("id", "=", first.rollout_id)
      .forUpdate()
      .execute();
    // Again under the lock: the step that held it may have moved the device on.
    const watched = await watchedRolloutDevice(trx, deviceId, first.rollout_id);
    if (!watched) return false;
    const device = await trx
      .selectFrom("devices")
      .select(["name", "active_snapshot_id"])
      .where("id", "=", deviceId)
      .executeTakeFirst();
    if (!device) return false;
    if (options.runningIt && device.active_snapshot_id !== watched.snapshot_id) return false;
    await trx
      .updateTable("rollout_devices")
      .set({ state: "failed", reason, failed_at: sql`now()` })
      .where("rollout_id", "=", watched.rollout_id)
      .where("device_id", "=", deviceId)
      .execute();
    const rollout = await trx
      .selectFrom("rollouts")
      .select(["id", "team_id", "application_id"])
      .where("id", "=", watched.rollout_id)
      .executeTakeFirstOrThrow();
    await recordAudit(trx, {
      event: "application.rollout.device-failed",
      entity: { type: "application", id: rollout.application_id },
      teamId: rollout.team_id,
      actor: "system",
      body: { rollout: { id: rollout.id }, device: { id: deviceId, name: device.name }, reason },
    });
    return true;
  });
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

/**
 * A device moved to another owner leaves the rollouts under way that hold it (as if deleted from
 * them): it runs its new home's target, and no wave deploys it.
 */
export async function leaveActiveRollouts(db: Db, deviceId: string): Promise<void> {
  await db
    .deleteFrom("rollout_devices")
    .where("device_id", "=", deviceId)
    .where("rollout_id", "in", (query) =>
      query
        .selectFrom("rollouts")
        .select("id")
        .where("state", "in", [...ACTIVE_ROLLOUT_STATES]),
    )
    .execute();
  await db
    .updateTable("devices")
    .set({ rollout_snapshot_id: null })
    .where("id", "=", deviceId)
    .where("rollout_snapshot_id", "is not", null)
    .execute();
}

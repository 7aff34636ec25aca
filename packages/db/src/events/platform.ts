// The platform's own events (issue 39), those no audit entry is: a device online or offline, the
// snapshot it reports running, an instance crashed and recovered. Each is an announcement of a
// change of state: one update, conditioned on the stored announcement differing, claims the change
// (under PostgreSQL's row lock a second process's same update finds nothing left to change) and
// the event is written in its transaction, so that a change is told once whichever process, and
// however many, learnt of it.
import { type Kysely, sql } from "kysely";
import type { Database } from "../schema";
import { recordEvent } from "./record";

type Db = Kysely<Database>;

interface Claimed {
  id: string;
  name: string;
  team_id: string;
}

/** `device.online` or `device.offline` for a device claimed. */
function deviceOnlineEvent(trx: Db, device: Claimed, online: boolean) {
  return recordEvent(trx, {
    type: online ? "device.online" : "device.offline",
    teamId: device.team_id,
    entity: { type: "device", id: device.id },
    data: { device: { id: device.id, name: device.name } },
  });
}

/**
 * The platform learnt that a device is online or offline: announced when that is not what it
 * announced last (a device never announced comes online with its first report).
 */
export async function announceDeviceOnline(db: Db, id: string, online: boolean): Promise<void> {
  await db.transaction().execute((trx) => claimDeviceOnline(trx, id, online));
}

/** As `announceDeviceOnline`, in the caller's transaction (that of the change it learnt from). */
export async function claimDeviceOnline(trx: Db, id: string, online: boolean): Promise<void> {
  const device = await trx
    .updateTable("devices")
    .set({ online })
    .where("id", "=", id)
    .where(sql<boolean>`online is distinct from ${online}`)
    .returning(["id", "name", "team_id"])
    .executeTakeFirst();
  if (device) await deviceOnlineEvent(trx, device, online);
}

/**
 * The devices that poll over HTTP (no MQTT session ever) and have not checked in for `silentMs`:
 * announced offline, as the API then shows them (`onlineStatus`). Returns how many.
 */
export async function announceSilentDevicesOffline(db: Db, silentMs: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const gone = await trx
      .updateTable("devices")
      .set({ online: false })
      .where("online", "=", true)
      .where("mqtt_connected", "is", null)
      .where(sql<boolean>`last_seen_at < now() - ${`${silentMs} milliseconds`}::interval`)
      .returning(["id", "name", "team_id"])
      .execute();
    for (const device of gone) await deviceOnlineEvent(trx, device, false);
    return gone.length;
  });
}

/** Announces `device.offline` for devices a statement of the caller's marked disconnected. */
export async function announceDevicesOffline(trx: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const gone = await trx
    .updateTable("devices")
    .set({ online: false })
    .where("id", "in", ids)
    .where("online", "=", true)
    .returning(["id", "name", "team_id"])
    .execute();
  for (const device of gone) await deviceOnlineEvent(trx, device, false);
}

/**
 * The device reports running `snapshotId` (null: none): `device.snapshot.running` when that is not
 * the snapshot it reported last. A snapshot the platform no longer has is named by its id alone.
 */
export async function announceDeviceSnapshot(
  db: Db,
  id: string,
  snapshotId: string | null,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const device = await trx
      .updateTable("devices")
      .set({ announced_snapshot_id: snapshotId })
      .where("id", "=", id)
      .where(sql<boolean>`announced_snapshot_id is distinct from ${snapshotId}`)
      .returning(["id", "name", "team_id"])
      .executeTakeFirst();
    if (!device) return;
    const snapshot = snapshotId
      ? await trx
          .selectFrom("snapshots")
          .select(["id", "name"])
          .where("id", "=", snapshotId)
          .executeTakeFirst()
      : undefined;
    await recordEvent(trx, {
      type: "device.snapshot.running",
      teamId: device.team_id,
      entity: { type: "device", id: device.id },
      data: {
        device: { id: device.id, name: device.name },
        snapshot: snapshotId ? (snapshot ?? { id: snapshotId, name: null }) : null,
      },
    });
  });
}

/**
 * The runtime reports the instance crashed (`reason`: what it says of why) or running: announced as
 * `project.crashed` when it had not crashed, `project.recovered` when it runs again after a crash.
 */
export async function announceProjectRuntime(
  db: Db,
  id: string,
  report: { crashed: true; reason: string | null } | { crashed: false },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const project = await trx
      .updateTable("projects")
      .set({ crashed_at: report.crashed ? sql<Date>`now()` : null })
      .where("id", "=", id)
      .where("crashed_at", report.crashed ? "is" : "is not", null)
      .returning(["id", "name", "team_id"])
      .executeTakeFirst();
    if (!project) return;
    const named = { id: project.id, name: project.name };
    await recordEvent(trx, {
      type: report.crashed ? "project.crashed" : "project.recovered",
      teamId: project.team_id,
      entity: { type: "project", id: project.id },
      data: report.crashed ? { project: named, reason: report.reason } : { project: named },
    });
  });
}

// The MQTT channel's questions of a device (issue 36): who may connect as it, what it reports on
// its status topic (recorded as a check-in is), what it should run (the `update` command's
// content) and whether it holds a session now.
import { type Kysely, sql } from "kysely";
import type { CheckIn, DeviceTarget } from "./device-check-in";
import { effectiveTarget } from "./devices";
import {
  announceDeviceOnline,
  announceDeviceSnapshot,
  announceDevicesOffline,
  claimDeviceOnline,
} from "./events/platform";
import type { Database } from "./schema";

type Db = Kysely<Database>;

/** What the broker needs to let a device connect, and what its own topics are. */
export interface DeviceBrokerIdentity {
  id: string;
  team_id: string;
  broker_password_digest: string | null;
  application_id: string | null;
  project_id: string | null;
}

export async function findDeviceForBroker(
  db: Db,
  id: string,
): Promise<DeviceBrokerIdentity | undefined> {
  return db
    .selectFrom("devices")
    .select(["id", "team_id", "broker_password_digest", "application_id", "project_id"])
    .where("id", "=", id)
    .executeTakeFirst();
}

/** What the platform wants a device to run, with what the `update` command carries besides. */
export interface ChannelTarget extends DeviceTarget {
  id: string;
  team_id: string;
  mode: string;
  agent_version: string | null;
}

const targetColumns = sql`d.id, d.team_id, d.application_id, d.project_id, d.settings_hash,
  d.mode, d.agent_version, ${effectiveTarget} as target`;

/** The targets of these devices (those that exist). */
export async function listDeviceTargets(db: Db, ids: readonly string[]): Promise<ChannelTarget[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<ChannelTarget>`select ${targetColumns} from devices d
    where d.id = any(${[...ids]}::text[])`.execute(db);
  return rows;
}

/**
 * A status message of a connected device: recorded as a check-in is (a null report is the agent
 * busy updating), and the device marked connected; the answer is its target (none: the device is
 * gone). A device not yet announced online, or reporting another snapshot than it did, is
 * announced (`device.online`, `device.snapshot.running`).
 */
export async function recordDeviceStatus(
  db: Db,
  id: string,
  report: CheckIn | null,
): Promise<ChannelTarget | undefined> {
  const set = report
    ? sql`state = ${report.state}, agent_version = ${report.agentVersion},
        node_red_version = ${report.nodeRedVersion}, nodejs_version = ${report.nodejsVersion},
        active_snapshot_id = ${report.snapshot}, active_settings_hash = ${report.settings}`
    : sql`state = 'updating'`;
  const { rows } = await sql<ChannelTarget & { online: boolean | null; announced: string | null }>`
    update devices d set last_seen_at = now(), mqtt_connected = true, ${set}
    where d.id = ${id}
    returning ${targetColumns}, d.online, d.announced_snapshot_id as announced`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  const { online, announced, ...target } = row;
  if (online !== true) await announceDeviceOnline(db, id, true);
  if (report && announced !== report.snapshot)
    await announceDeviceSnapshot(db, id, report.snapshot);
  return target;
}

/** A device's MQTT session began or ended: announced online or offline with it. */
export async function setDeviceConnected(db: Db, id: string, connected: boolean): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable("devices")
      .set({
        mqtt_connected: connected,
        ...(connected && { last_seen_at: sql<Date>`now()` }),
      })
      .where("id", "=", id)
      .execute();
    await claimDeviceOnline(trx, id, connected);
  });
}

/** No device holds a session with a broker that has just started: those that did go offline. */
export async function resetDeviceConnections(db: Db): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const reset = await trx
      .updateTable("devices")
      .set({ mqtt_connected: false })
      .where("mqtt_connected", "=", true)
      .returning("id")
      .execute();
    await announceDevicesOffline(
      trx,
      reset.map((device) => device.id),
    );
  });
}

// The rollouts' runner: every tick, each rollout under way is moved on by whichever API process
// takes its row first (`for update skip locked`: one place, however many processes share the
// database), in one transaction. It starts a scheduled rollout at its time, deploys a wave (the
// devices get the rollout's snapshot over their targets), gates each device (docs/rollouts.md),
// waits for an owner's approval between waves when asked, and ends the rollout: succeeded (the
// snapshot becomes the group's target, or the devices' own), or rolled back past its budget of
// failures (every device it touched runs its target from before again; later waves are never
// touched).
import {
  ACTIVE_ROLLOUT_STATES,
  activeRolloutIds,
  type Db,
  devicesReports,
  findRollout,
  type RolloutDetail,
  type RolloutDeviceChange,
  type RolloutDeviceDetail,
  rolloutDevices,
  setDevicesTarget,
  setRolloutSnapshot,
  updateDeviceGroup,
  updateRollout,
  updateRolloutDevice,
} from "@flowplane/db";
import type { FastifyBaseLogger } from "fastify";
import { type Actor } from "../core/audit";
import { RoundLog } from "../core/background";
import { recordRolloutDeviceEvent, recordRolloutEvent } from "./events";

/** What the agent reports that is not a Node-RED that runs. */
const BROKEN_STATES = new Set(["crashed", "error", "safe", "stopped", "suspended"]);

type Ending = "succeeded" | "rolled_back" | "aborted" | "failed";

const ENDING_EVENT = {
  succeeded: "succeeded",
  rolled_back: "rolled-back",
  aborted: "aborted",
  failed: "failed",
} as const;

/** Each wave's start and end, by index. */
function waveTimes(rollout: RolloutDetail, wave: number) {
  const times = [...rollout.wave_times];
  while (times.length <= wave) times.push({ startedAt: null, finishedAt: null });
  return times;
}

/** A device's new state in the rollout, kept and in the device's log. */
async function moveOn(
  trx: Db,
  rollout: RolloutDetail,
  device: RolloutDeviceDetail,
  change: RolloutDeviceChange,
  event: "deploying" | "healthy" | "rolled-back",
  more: Record<string, unknown> = {},
) {
  Object.assign(device, change);
  await updateRolloutDevice(trx, rollout.id, device.device_id, change);
  const named = { id: device.device_id, name: device.device_name };
  await recordRolloutDeviceEvent(trx, rollout, named, event, more);
}

async function failDevice(
  trx: Db,
  rollout: RolloutDetail,
  device: RolloutDeviceDetail,
  reason: string,
  now: Date,
) {
  Object.assign(device, { state: "failed", reason, failed_at: now });
  await updateRolloutDevice(trx, rollout.id, device.device_id, {
    state: "failed",
    reason,
    failed_at: now,
  });
  await recordRolloutEvent(trx, rollout, "system", "device-failed", {
    device: { id: device.device_id, name: device.device_name },
    reason,
  });
}

/**
 * The gate, for the devices being deployed and soaked: a device soaks once it reports running the
 * snapshot and its flows reported starting; it is healthy after the soak; it fails when it reports
 * Node-RED broken, another snapshot, or nothing in time. (Its flows' errors, a restart and the
 * agent's crash reports fail it as they arrive: health.ts, devices/live.ts.)
 */
async function gate(trx: Db, rollout: RolloutDetail, devices: RolloutDeviceDetail[], now: Date) {
  const watched = devices.filter((d) => d.state === "deploying" || d.state === "soaking");
  if (watched.length === 0) return false;
  const reports = new Map(
    (
      await devicesReports(
        trx,
        watched.map((d) => d.device_id),
      )
    ).map((report) => [report.id, report]),
  );
  const timeoutMs = rollout.report_timeout_seconds * 1000;
  const before = watched.map((d) => d.state).join();
  for (const device of watched) {
    const report = reports.get(device.device_id);
    const runsIt = report?.active_snapshot_id === rollout.snapshot_id;
    const state = report?.state ?? null;
    if (device.state === "deploying") {
      if (runsIt && state !== null && BROKEN_STATES.has(state)) {
        await failDevice(trx, rollout, device, `Node-RED is ${state} on the snapshot`, now);
      } else if (runsIt && state === "running" && device.starts > 0) {
        device.state = "soaking";
        await updateRolloutDevice(trx, rollout.id, device.device_id, {
          state: "soaking",
          soak_started_at: now,
        });
        device.soak_started_at = now;
      } else if (now.getTime() - device.deployed_at!.getTime() > timeoutMs) {
        const what = !runsIt
          ? `it did not report running the snapshot (it reports ${state ?? "nothing"})`
          : "its flows did not report starting";
        await failDevice(
          trx,
          rollout,
          device,
          `Not in time: within ${rollout.report_timeout_seconds} s ${what}`,
          now,
        );
      }
      continue;
    }
    if (!runsIt) {
      await failDevice(
        trx,
        rollout,
        device,
        "It reported running another snapshot during the soak",
        now,
      );
    } else if (state !== "running") {
      await failDevice(
        trx,
        rollout,
        device,
        `Node-RED was ${state ?? "gone"} during the soak`,
        now,
      );
    } else if (now.getTime() - device.soak_started_at!.getTime() >= rollout.soak_seconds * 1000) {
      await moveOn(trx, rollout, device, { state: "healthy", healthy_at: now }, "healthy");
    }
  }
  return watched.map((d) => d.state).join() !== before;
}

/** The wave's devices get the rollout's snapshot over their targets. */
async function deployWave(
  trx: Db,
  rollout: RolloutDetail,
  wave: number,
  devices: RolloutDeviceDetail[],
  now: Date,
) {
  const members = devices.filter((d) => d.wave === wave && d.state === "pending");
  await setRolloutSnapshot(
    trx,
    members.map((d) => d.device_id),
    rollout.snapshot_id,
  );
  for (const device of members) {
    const change = { state: "deploying", deployed_at: now, starts: 0 };
    await moveOn(trx, rollout, device, change, "deploying", { wave });
  }
  const times = waveTimes(rollout, wave);
  times[wave] = { startedAt: now.toISOString(), finishedAt: null };
  rollout.wave_times = times;
  rollout.current_wave = wave;
  await updateRollout(trx, rollout.id, { current_wave: wave, wave_times: times });
  await recordRolloutEvent(trx, rollout, "system", "wave-started", {
    wave,
    devices: members.map((d) => ({ id: d.device_id, name: d.device_name })),
  });
}

/**
 * Ends a rollout. Succeeded: the snapshot becomes the group's target (or each device's own). Else
 * every device it touched runs its target from before again, with the reason; devices of waves it
 * never reached are untouched.
 */
export async function endRollout(
  trx: Db,
  rollout: RolloutDetail,
  devices: RolloutDeviceDetail[],
  ending: Ending,
  reason: string | null,
  actor: Actor,
  now: Date,
) {
  const ids = devices.map((d) => d.device_id);
  if (ending === "succeeded" && rollout.snapshot_id !== null) {
    if (rollout.device_group_id !== null) {
      await updateDeviceGroup(trx, rollout.device_group_id, {
        targetSnapshotId: rollout.snapshot_id,
      });
    } else {
      await setDevicesTarget(trx, ids, rollout.snapshot_id, rollout.application_id);
    }
    await setRolloutSnapshot(trx, ids, null);
  } else {
    const touched = devices.filter((d) => d.state !== "pending" && d.state !== "rolled_back");
    await setRolloutSnapshot(
      trx,
      touched.map((d) => d.device_id),
      null,
    );
    for (const device of touched) {
      const why = device.failed_at !== null ? device.reason : `Rolled back: ${reason}`;
      const to = device.previous_id ? { id: device.previous_id, name: device.previous_name } : null;
      await moveOn(trx, rollout, device, { state: "rolled_back", reason: why }, "rolled-back", {
        reason: why,
        to,
      });
    }
  }
  const times = waveTimes(rollout, rollout.current_wave);
  const current = times[rollout.current_wave]!;
  if (current.startedAt !== null && current.finishedAt === null) {
    times[rollout.current_wave] = { ...current, finishedAt: now.toISOString() };
  }
  Object.assign(rollout, { state: ending, reason, finished_at: now, wave_times: times });
  await updateRollout(trx, rollout.id, {
    state: ending,
    reason,
    finished_at: now,
    wave_times: times,
  });
  await recordRolloutEvent(trx, rollout, actor, ENDING_EVENT[ending], {
    ...(reason !== null && { reason }),
    failures: devices.filter((d) => d.failed_at !== null).length,
  });
}

/** One step of a rollout under way, in the caller's transaction; answers whether it changed. */
export async function stepRollout(trx: Db, rollout: RolloutDetail, now: Date): Promise<boolean> {
  const devices = await rolloutDevices(trx, rollout.id);
  if (rollout.snapshot_id === null) {
    await endRollout(trx, rollout, devices, "failed", "Its snapshot was deleted", "system", now);
    return true;
  }
  let changed = false;
  if (rollout.state === "scheduled") {
    if (rollout.start_at !== null && rollout.start_at > now) return false;
    rollout.state = "running";
    await updateRollout(trx, rollout.id, { state: "running" });
    await recordRolloutEvent(trx, rollout, "system", "started");
    changed = true;
  }
  if (devices.length === 0) {
    // A device deleted leaves its rollout (its rows go with it): none left, nothing to roll out.
    await endRollout(trx, rollout, devices, "failed", "Its devices were deleted", "system", now);
    return true;
  }
  if (rollout.wave_times.length === 0 && rollout.state === "running") {
    await deployWave(trx, rollout, 0, devices, now);
    return true;
  }
  changed = (await gate(trx, rollout, devices, now)) || changed;
  const failures = devices.filter((d) => d.failed_at !== null).length;
  if (failures > rollout.max_failures) {
    const reason = `${failures} ${failures === 1 ? "device" : "devices"} failed the gate; the rollout allows ${rollout.max_failures}`;
    await endRollout(trx, rollout, devices, "rolled_back", reason, "system", now);
    return true;
  }
  if (rollout.state !== "running") return changed;
  const wave = rollout.current_wave;
  const members = devices.filter((d) => d.wave === wave);
  if (!members.every((d) => d.state === "healthy" || d.state === "failed")) return changed;
  const times = waveTimes(rollout, wave);
  times[wave] = { startedAt: times[wave]!.startedAt, finishedAt: now.toISOString() };
  rollout.wave_times = times;
  const last = devices.reduce((most, d) => Math.max(most, d.wave), 0);
  if (wave >= last) {
    await endRollout(trx, rollout, devices, "succeeded", null, "system", now);
    return true;
  }
  const next = wave + 1;
  if (rollout.require_approval && rollout.approved_wave < next) {
    rollout.state = "waiting_approval";
    await updateRollout(trx, rollout.id, { state: "waiting_approval", wave_times: times });
    await recordRolloutEvent(trx, rollout, "system", "waiting-approval", { wave: next });
    return true;
  }
  await deployWave(trx, rollout, next, devices, now);
  return true;
}

/**
 * Moves each rollout under way on, every `tickMs` and when poked (an action, a device's report),
 * one tick at a time; `changed` is told when a tick changed what devices should run.
 */
export class RolloutRunner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private queued = false;
  private closed = false;
  private readonly rounds: RoundLog;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly tickMs: number,
    private readonly changed: () => void,
  ) {
    this.rounds = new RoundLog(log, "rollouts not moved on");
  }

  start() {
    this.timer = setInterval(() => this.poke(), this.tickMs);
    this.timer.unref();
  }

  /** A tick soon (one more after the one under way, at most). */
  poke() {
    if (this.queued || this.closed) return;
    this.queued = true;
    this.running = this.running.then(async () => {
      this.queued = false;
      if (this.closed) return;
      try {
        await this.tick();
        this.rounds.succeeded();
      } catch (error) {
        this.rounds.failed(error);
      }
    });
  }

  private async tick() {
    let changed = false;
    for (const id of await activeRolloutIds(this.db)) {
      try {
        const stepped = await this.db.transaction().execute(async (trx) => {
          // Another process holds it: that process moves it on.
          const rollout = await findRollout(trx, id, "skip-locked");
          if (!rollout || !ACTIVE.has(rollout.state)) return false;
          return stepRollout(trx, rollout, new Date());
        });
        changed ||= stepped;
      } catch (error) {
        // One rollout's failure stalls no other: the next tick tries it again.
        this.log.error({ err: error, rollout: id }, "rollout not moved on");
      }
    }
    if (changed) this.changed();
  }

  async close() {
    this.closed = true;
    clearInterval(this.timer);
    await this.running;
  }
}

const ACTIVE = new Set<string>(ACTIVE_ROLLOUT_STATES);

// Rollouts as the API shows them: the rollout with each wave's state and each device's, and the
// summaries its lists show; a plan (`dryRun`) as the same waves with what each device runs now and
// will run.
import type { Rollout, RolloutDeviceState, RolloutPlan, RolloutState } from "@flowplane/contract";
import type { RolloutDetail, RolloutDeviceDetail, RolloutListRow } from "@flowplane/db";
import type { Plan } from "./plan";
import { runsOf } from "./plan";

const iso = (date: Date | null) => (date === null ? null : date.toISOString());
const ref = (id: string | null, name: string | null) =>
  id !== null && name !== null ? { id, name } : null;

function settingsView(rollout: RolloutDetail) {
  return {
    snapshot: { id: rollout.snapshot_id, name: rollout.snapshot_name },
    application: { id: rollout.application_id, name: rollout.application_name },
    deviceGroup: ref(rollout.device_group_id, rollout.device_group_name),
    soakSeconds: rollout.soak_seconds,
    reportTimeoutSeconds: rollout.report_timeout_seconds,
    maxFailures: rollout.max_failures,
    requireApproval: rollout.require_approval,
    startAt: iso(rollout.start_at),
  };
}

function summaryFields(rollout: RolloutDetail, baseUrl: string, failures: number) {
  return {
    id: rollout.id,
    state: rollout.state as RolloutState,
    reason: rollout.reason,
    ...settingsView(rollout),
    failures,
    currentWave: rollout.current_wave,
    createdBy:
      rollout.created_by !== null && rollout.created_by_username !== null
        ? { id: rollout.created_by, username: rollout.created_by_username }
        : null,
    createdAt: rollout.created_at.toISOString(),
    updatedAt: rollout.updated_at.toISOString(),
    finishedAt: iso(rollout.finished_at),
    links: { self: `${baseUrl}/api/v1/rollouts/${rollout.id}` },
  };
}

/** A wave's state, from its devices' and the rollout's. */
function waveState(rollout: RolloutDetail, index: number, devices: RolloutDeviceDetail[]) {
  if (devices.some((d) => d.state === "rolled_back")) return "rolled_back" as const;
  if (devices.every((d) => d.state === "healthy" || d.state === "failed")) return "done" as const;
  if (devices.some((d) => d.state === "deploying" || d.state === "soaking")) {
    return "running" as const;
  }
  if (rollout.state === "waiting_approval" && index === rollout.current_wave + 1) {
    return "waiting_approval" as const;
  }
  return "pending" as const;
}

export function rolloutView(
  rollout: RolloutDetail,
  devices: RolloutDeviceDetail[],
  baseUrl: string,
): Rollout {
  const count = devices.reduce((most, d) => Math.max(most, d.wave + 1), 0);
  const waves = Array.from({ length: count }, (_, index) => {
    const members = devices.filter((d) => d.wave === index);
    const times = rollout.wave_times[index];
    return {
      index,
      state: waveState(rollout, index, members),
      startedAt: times?.startedAt ?? null,
      finishedAt: times?.finishedAt ?? null,
      devices: members.map((d) => ({
        id: d.device_id,
        name: d.device_name,
        state: d.state as RolloutDeviceState,
        reason: d.reason,
        runs: ref(d.runs_id, d.runs_name),
        previous: ref(d.previous_id, d.previous_name),
        deployedAt: iso(d.deployed_at),
        healthyAt: iso(d.healthy_at),
      })),
    };
  });
  const failures = devices.filter((d) => d.failed_at !== null).length;
  return { ...summaryFields(rollout, baseUrl, failures), waves };
}

export function rolloutSummaryView(row: RolloutListRow, baseUrl: string) {
  return {
    ...summaryFields(row, baseUrl, row.failure_count),
    deviceCount: row.device_count,
    waveCount: row.wave_count,
  };
}

/** A dry run's answer: the plan, changing nothing. */
export function planView(
  plan: Plan,
  input: {
    soakSeconds: number;
    reportTimeoutSeconds: number;
    maxFailures: number;
    requireApproval: boolean;
    startAt?: string;
  },
  applicationName: string,
): RolloutPlan {
  return {
    dryRun: true,
    snapshot: plan.snapshot,
    application: { id: plan.applicationId, name: applicationName },
    deviceGroup: plan.deviceGroup,
    soakSeconds: input.soakSeconds,
    reportTimeoutSeconds: input.reportTimeoutSeconds,
    maxFailures: input.maxFailures,
    requireApproval: input.requireApproval,
    startAt: input.startAt ?? null,
    waves: plan.waves.map((devices, index) => ({
      index,
      devices: devices.map((device) => ({
        id: device.id,
        name: device.name,
        runs: runsOf(device),
        willRun: plan.snapshot,
      })),
    })),
  };
}

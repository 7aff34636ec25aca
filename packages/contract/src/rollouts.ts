// Rollouts: a snapshot sent to an application's devices (a device group's members, or devices named
// one by one) wave by wave, each device gated on its health for a soak time, with automatic
// rollback past a budget of failures (docs/rollouts.md).
import { z } from "zod";
import { Id, Links, ListMeta, Text, Timestamp } from "./common";

export const ROLLOUT_STATES = [
  "scheduled",
  "running",
  "paused",
  "waiting_approval",
  "succeeded",
  "failed",
  "rolled_back",
  "aborted",
] as const;

/** The states a rollout ends in: nothing changes after. */
export const FINISHED_ROLLOUT_STATES = ["succeeded", "failed", "rolled_back", "aborted"] as const;

export const ROLLOUT_WAVE_STATES = [
  "pending",
  "waiting_approval",
  "running",
  "done",
  "rolled_back",
] as const;

export const ROLLOUT_DEVICE_STATES = [
  "pending",
  "deploying",
  "soaking",
  "healthy",
  "failed",
  "rolled_back",
] as const;

/** A wave: a number of devices, or a share of the target (rounded up); the last takes the rest. */
export const RolloutWaveSpec = z
  .union([
    z.strictObject({ count: z.number().int().min(1).describe("Devices in the wave (1 or more)") }),
    z.strictObject({
      percent: z
        .number()
        .gt(0)
        .max(100)
        .describe("Share of the target's devices, rounded up (above 0, up to 100)"),
    }),
  ])
  .meta({ id: "RolloutWaveSpec" });

/** A snapshot by id and name. */
const SnapshotBrief = z.object({ id: Id, name: z.string() });

export type RolloutWaveSpec = z.infer<typeof RolloutWaveSpec>;

/**
 * Waves as people type them (`1,50%,100%`: a whole number is a count of devices, `N%` a share of
 * the target), for the CLI and the pages alike: the waves, or the first part that is neither (its
 * index and text). Whether the waves can be met is the API's to judge.
 */
export function wavesOfText(
  text: string,
): { waves: RolloutWaveSpec[] } | { bad: { index: number; part: string } } {
  const waves: RolloutWaveSpec[] = [];
  for (const [index, raw] of text.split(",").entries()) {
    const part = raw.trim();
    const percent = /^(\d+(?:\.\d+)?)\s*%$/.exec(part);
    if (percent) waves.push({ percent: Number(percent[1]) });
    else if (/^\d+$/.test(part)) waves.push({ count: Number(part) });
    else return { bad: { index, part } };
  }
  return { waves };
}

export const RolloutDevice = z
  .object({
    id: Id,
    name: z.string(),
    state: z.enum(ROLLOUT_DEVICE_STATES),
    reason: z.string().nullable().describe("Why it failed or was rolled back; null otherwise"),
    runs: SnapshotBrief.nullable().describe("What it ran when the rollout was planned"),
    previous: SnapshotBrief.nullable().describe(
      "What it goes back to on rollback: its target before the rollout",
    ),
    deployedAt: Timestamp.nullable(),
    healthyAt: Timestamp.nullable(),
  })
  .meta({ id: "RolloutDevice" });

export const RolloutWave = z
  .object({
    index: z.number().int().describe("0 for the first wave"),
    state: z.enum(ROLLOUT_WAVE_STATES),
    startedAt: Timestamp.nullable(),
    finishedAt: Timestamp.nullable(),
    devices: z.array(RolloutDevice),
  })
  .meta({ id: "RolloutWave" });

const RolloutSettings = {
  snapshot: z.object({
    id: Id.nullable().describe("null: the snapshot was deleted since (the rollout then failed)"),
    name: z.string(),
  }),
  application: z.object({ id: Id, name: z.string() }),
  deviceGroup: z
    .object({ id: Id, name: z.string() })
    .nullable()
    .describe("The group rolled out to; null: devices named one by one"),
  soakSeconds: z.number().int(),
  reportTimeoutSeconds: z.number().int(),
  maxFailures: z.number().int(),
  requireApproval: z.boolean(),
  startAt: Timestamp.nullable(),
};

export const Rollout = z
  .object({
    id: Id,
    state: z.enum(ROLLOUT_STATES),
    reason: z.string().nullable().describe("Why it stopped, when it did not succeed"),
    ...RolloutSettings,
    failures: z.number().int().describe("Devices that failed the gate so far"),
    currentWave: z.number().int().describe("The wave under way (or the last one reached)"),
    waves: z.array(RolloutWave),
    createdBy: z.object({ id: Id, username: z.string() }).nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    finishedAt: Timestamp.nullable(),
    links: Links,
  })
  .meta({ id: "Rollout" });

export const RolloutPlanDevice = z
  .object({
    id: Id,
    name: z.string(),
    runs: SnapshotBrief.nullable().describe("What it runs now"),
    willRun: SnapshotBrief.describe("What it will run once its wave reaches it"),
  })
  .meta({ id: "RolloutPlanDevice" });

export const RolloutPlan = z
  .object({
    dryRun: z.literal(true),
    ...RolloutSettings,
    waves: z.array(z.object({ index: z.number().int(), devices: z.array(RolloutPlanDevice) })),
  })
  .meta({ id: "RolloutPlan" });

export const RolloutOrPlan = z.union([Rollout, RolloutPlan]);

export const RolloutSummary = Rollout.omit({ waves: true })
  .extend({
    deviceCount: z.number().int(),
    waveCount: z.number().int(),
  })
  .meta({ id: "RolloutSummary" });

export const RolloutList = z
  .object({ meta: ListMeta, count: z.number().int(), rollouts: z.array(RolloutSummary) })
  .meta({ id: "RolloutList" });

export const CreateRolloutInput = z.strictObject({
  snapshotId: Id.describe("A snapshot of the devices' application"),
  deviceGroupId: Id.optional().describe("Roll out to this group's members (or `devices`)"),
  devices: z
    .array(Id)
    .min(1)
    .max(500)
    .optional()
    .describe("Roll out to these devices of the snapshot's application (or `deviceGroupId`)"),
  waves: z
    .array(RolloutWaveSpec)
    .min(1)
    .max(20)
    .describe("In order; the last takes every device the others did not"),
  soakSeconds: z
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(60)
    .describe("How long each device must stay healthy once it runs the snapshot (default 60)"),
  reportTimeoutSeconds: z
    .number()
    .int()
    .min(10)
    .max(86_400)
    .default(600)
    .describe("How long a device has to report running the snapshot before it fails (default 600)"),
  maxFailures: z
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(0)
    .describe("Devices that may fail before the rollout stops and rolls back (default 0)"),
  startAt: Text.check(z.iso.datetime({ offset: true }))
    .optional()
    .describe("Start no sooner (an ISO time: a maintenance window's start); absent: now"),
  requireApproval: z
    .boolean()
    .default(false)
    .describe("Each wave after the first waits for an owner's approve"),
  dryRun: z.boolean().default(false).describe("Answer the plan and change nothing"),
});

export const RolloutIdInput = z.strictObject({ rolloutId: Id });

const RolloutListQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(50).describe("1–100, default 50"),
  cursor: Id.optional().describe("The `meta.next_cursor` of the previous page"),
  state: z.enum(ROLLOUT_STATES).optional().describe("Only rollouts in this state"),
};

export const ApplicationRolloutsInput = z.strictObject({ applicationId: Id, ...RolloutListQuery });
export const GroupRolloutsInput = z.strictObject({
  applicationId: Id,
  groupId: Id,
  ...RolloutListQuery,
});

/** What a device's flows report to the gate (the hidden health tab). */
export const RolloutHealthReport = z
  .strictObject({
    event: z.enum(["started", "error"]),
    message: Text.max(2000).optional(),
    source: z
      .strictObject({
        id: Text.max(64).optional(),
        type: Text.max(128).optional(),
        name: Text.max(256).optional(),
      })
      .optional(),
  })
  .describe("What a device's flows report to the rollout that watches them");

export type Rollout = z.infer<typeof Rollout>;
export type RolloutPlan = z.infer<typeof RolloutPlan>;
export type RolloutState = (typeof ROLLOUT_STATES)[number];
export type RolloutDeviceState = (typeof ROLLOUT_DEVICE_STATES)[number];

// What rollouts write in the audit log: every step in the rollout's application's log
// (`application.rollout.*`: created, started, wave-started, waiting-approval, approved, paused,
// resumed, device-failed, succeeded, rolled-back, failed, aborted), and what happens to each device
// in the device's own (`device.rollout.*`: deploying, healthy, rolled-back).
import { type Db, recordAudit } from "@flowplane/db";
import { type Actor, ownEntry, ownLog } from "../core/audit";

export type RolloutVerb =
  | "created"
  | "started"
  | "wave-started"
  | "waiting-approval"
  | "approved"
  | "paused"
  | "resumed"
  | "device-failed"
  | "succeeded"
  | "rolled-back"
  | "failed"
  | "aborted";

interface RolloutNamed {
  id: string;
  team_id: string;
  application_id: string;
  snapshot_id: string | null;
  snapshot_name: string;
}

/** A step of the rollout, in its application's log. */
export function recordRolloutEvent(
  trx: Db,
  rollout: RolloutNamed,
  actor: Actor,
  verb: RolloutVerb,
  more: Record<string, unknown> = {},
): Promise<void> {
  return recordAudit(trx, {
    event: `application.rollout.${verb}`,
    ...ownLog("application", rollout.application_id, rollout.team_id),
    actor,
    body: {
      rollout: { id: rollout.id },
      snapshot: { id: rollout.snapshot_id, name: rollout.snapshot_name },
      ...more,
    },
  });
}

/** What the rollout did to a device, in the device's log. */
export function recordRolloutDeviceEvent(
  trx: Db,
  rollout: RolloutNamed,
  device: { id: string; name: string },
  verb: "deploying" | "healthy" | "rolled-back",
  more: Record<string, unknown> = {},
): Promise<void> {
  return recordAudit(
    trx,
    ownEntry(
      `device.rollout.${verb}`,
      "device",
      { ...device, team_id: rollout.team_id },
      "system",
      {
        rollout: { id: rollout.id },
        snapshot: { id: rollout.snapshot_id, name: rollout.snapshot_name },
        ...more,
      },
    ),
  );
}

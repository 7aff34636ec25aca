// The rollouts' tables (migrations/2026-11-29T1800-rollouts.ts).
import type { Generated } from "kysely";
import type { CreatedAt, Json, Timestamp } from "./schema-columns";

export type RolloutWaveSpecJson = { count: number } | { percent: number };

export interface RolloutsTable {
  id: string;
  team_id: string;
  application_id: string;
  device_group_id: string | null;
  device_group_name: string | null;
  snapshot_id: string | null;
  snapshot_name: string;
  state: string;
  reason: string | null;
  waves: Json<RolloutWaveSpecJson[]>;
  soak_seconds: number;
  report_timeout_seconds: number;
  max_failures: number;
  require_approval: boolean;
  start_at: Date | null;
  current_wave: Generated<number>;
  wave_times: Json<{ startedAt: string | null; finishedAt: string | null }[]>;
  approved_wave: Generated<number>;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  finished_at: Date | null;
}

export interface RolloutDevicesTable {
  rollout_id: string;
  device_id: string;
  wave: number;
  position: number;
  state: Generated<string>;
  reason: string | null;
  runs_id: string | null;
  runs_name: string | null;
  previous_id: string | null;
  previous_name: string | null;
  deployed_at: Date | null;
  soak_started_at: Date | null;
  healthy_at: Date | null;
  failed_at: Date | null;
  starts: Generated<number>;
}

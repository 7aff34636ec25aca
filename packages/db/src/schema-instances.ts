// The tables of what teams run (schema.ts): hosted instances (projects) with their types, stacks,
// templates, settings, storage and snapshots; applications; remote devices, their groups and
// provisioning tokens; pipelines and their stages; the team library; operations; editors' sign-in
// codes and devices' registrations.
import type { ColumnType, Generated } from "kysely";
import type { CreatedAt, Json, Timestamp } from "./schema-columns";

export interface ProjectTypesTable {
  id: string;
  name: string;
  description: string | null;
  active: Generated<boolean>;
  order: Generated<number>;
  properties: Json;
  default_stack_id: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ProjectStacksTable {
  id: string;
  name: string;
  label: string | null;
  active: Generated<boolean>;
  project_type_id: string | null;
  /** `{ nodered: "4.1.15", … }` */
  properties: Json;
  replaced_by: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ProjectTemplatesTable {
  id: string;
  name: string;
  description: string | null;
  active: Generated<boolean>;
  settings: Json;
  policy: Json;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface ApplicationsTable {
  id: string;
  team_id: string;
  name: string;
  description: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Bumped by every update a client could overwrite (its ETag; migration resource-versions). */
  version: Generated<number>;
}

export interface EnvVar {
  name: string;
  value: string;
  hidden: boolean;
}

/** An instance's own settings: its variables and the modules installed from the palette. */
export interface ProjectSettings {
  env?: EnvVar[];
  palette?: { modules?: Record<string, string> };
}

export interface ProjectsTable {
  id: string;
  name: string;
  application_id: string;
  team_id: string;
  project_type_id: string;
  stack_id: string;
  template_id: string;
  /** The desired state. */
  state: Generated<"running" | "stopped" | "suspended">;
  in_flight: "starting" | "stopping" | "restarting" | "suspending" | null;
  in_flight_at: Date | null;
  settings: Json<ProjectSettings>;
  token_digest: string | null;
  /** When the runtime reported a crash the instance has not run again since (`project.crashed`). */
  crashed_at: Generated<Date | null>;
  /** The snapshot the instance's devices should run. */
  device_target_snapshot_id: Generated<string | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Bumped by every update a client could overwrite (its ETag; migration resource-versions). */
  version: Generated<number>;
}

export interface ProjectStorageTable {
  project_id: string;
  flows: Json<unknown[]>;
  credentials: Json;
  settings: Json;
  library: Json<Record<string, { meta: Record<string, unknown>; body: string }>>;
  flows_updated_at: Date | null;
}

/** What a snapshot holds besides its flows (FlowFuse's `settings` column). */
export interface SnapshotSettings {
  /** The instance's settings when it was taken (beyond env and the palette's modules). */
  settings: Record<string, unknown>;
  /** The instance's variables; hidden ones with a blank value (theirs are in `secrets`). */
  env: EnvVar[];
  /** `{ "node-red": "<version>", "<package>": "<version>" }` */
  modules: Record<string, string>;
}

export interface SnapshotsTable {
  id: string;
  team_id: string;
  application_id: string;
  owner_type: "instance" | "device";
  project_id: string | null;
  device_id: string | null;
  name: string;
  description: Generated<string>;
  user_id: string | null;
  flows: Json<unknown[]>;
  settings: Json<SnapshotSettings>;
  /** Encrypted `{ credentials, env }` (Node-RED's format, the snapshot's own key). */
  secrets: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface DevicesTable {
  id: string;
  team_id: string;
  application_id: string | null;
  project_id: string | null;
  name: string;
  type: Generated<string>;
  token_digest: string;
  otc_digest: string | null;
  otc_expires_at: Date | null;
  credential_secret: string;
  settings: Json<{ env?: EnvVar[] }>;
  settings_hash: string;
  target_snapshot_id: string | null;
  active_snapshot_id: string | null;
  /** The settings hash the device last reported (what it runs with). */
  active_settings_hash: string | null;
  state: string | null;
  last_seen_at: Date | null;
  agent_version: string | null;
  node_red_version: string | null;
  nodejs_version: string | null;
  mode: Generated<string>;
  group_id: string | null;
  /** The digest of the device's MQTT password (its broker credentials, issued with its token). */
  broker_password_digest: string | null;
  /** Whether it holds an MQTT session with the platform now; null: it never has. */
  mqtt_connected: boolean | null;
  /** Whether the platform last announced it online (`device.online`/`offline`); null: never. */
  online: Generated<boolean | null>;
  /** The snapshot it last reported running, as announced (`device.snapshot.running`). */
  announced_snapshot_id: Generated<string | null>;
  /** The digest of the remote editor's tunnel token, while the tunnel is open. */
  editor_token_digest: string | null;
  /** The snapshot a rollout's wave gives it, over every other target, while the rollout runs. */
  rollout_snapshot_id: Generated<string | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Bumped by every update a client could overwrite (its ETag; migration resource-versions). */
  version: Generated<number>;
}

export interface DeviceGroupsTable {
  id: string;
  team_id: string;
  application_id: string;
  name: string;
  description: Generated<string>;
  target_snapshot_id: string | null;
  settings: Json<{ env?: EnvVar[] }>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Bumped by every update a client could overwrite (its ETag; migration resource-versions). */
  version: Generated<number>;
}

export interface TeamLibraryEntriesTable {
  team_id: string;
  type: string;
  path: string;
  meta: Json<Record<string, unknown>>;
  body: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface DeviceProvisioningTokensTable {
  id: string;
  team_id: string;
  name: string;
  digest: string;
  application_id: string | null;
  project_id: string | null;
  expires_at: Date | null;
  created_at: CreatedAt;
}

export interface PipelinesTable {
  id: string;
  team_id: string;
  application_id: string;
  name: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type StageActionValue =
  "create_snapshot" | "use_active_snapshot" | "use_latest_snapshot" | "prompt" | "none";

export interface PipelineStagesTable {
  id: string;
  pipeline_id: string;
  name: string;
  action: Generated<StageActionValue>;
  deploy_to_devices: Generated<boolean>;
  instance_id: string | null;
  device_group_id: Generated<string | null>;
  device_id: Generated<string | null>;
  /** The team's hook told of every deploy into the stage (null: none). */
  webhook_id: Generated<string | null>;
  next_stage_id: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface OperationsTable {
  id: string;
  team_id: string;
  kind: string;
  status: Generated<"pending" | "succeeded" | "failed">;
  error_code: string | null;
  error_message: string | null;
  subject: Json<Record<string, unknown>>;
  user_id: string | null;
  created_at: CreatedAt;
  /** While pending, the running process's heartbeat too. */
  updated_at: Timestamp;
  finished_at: Date | null;
  /** What it deploys to, when only one may run at a time (`group:<id>`, `device:<id>`). */
  target: string | null;
}

/** A one-time code the platform's sign-in page hands an editor (instances/editor-sign-in.ts). */
export interface DeviceRegistrationsTable {
  /** HMAC-SHA-256 digests of the registration page's token and of the agent's poll token. */
  session_digest: string;
  done_digest: string;
  status: ColumnType<
    "pending" | "claimed" | "done",
    "pending" | undefined,
    "pending" | "claimed" | "done"
  >;
  device_id: string | null;
  expires_at: Date;
  /** The address the agent asked from (shown on the confirming page). */
  requested_from: string | null;
  created_at: CreatedAt;
}

export interface EditorAuthorizationCodesTable {
  /** HMAC-SHA-256 of the code, keyed by the server secret. */
  digest: string;
  user_id: string;
  project_id: string;
  expires_at: Date;
  created_at: CreatedAt;
}

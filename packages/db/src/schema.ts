// The database as Kysely sees it: one interface per table. Row types for reads and writes are
// derived with Selectable / Insertable / Updateable rather than restated.
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface UsersTable {
  id: string;
  username: string;
  name: string;
  email: string | null;
  admin: Generated<boolean>;
  /** scrypt, in the format of @flowplane/auth's hashPassword; null: cannot sign in. */
  password_hash: string | null;
  /** The next sign-in must choose a new password first. */
  password_expired: Generated<boolean>;
  /** Suspended users' tokens and sessions fail; they cannot sign in. */
  suspended: Generated<boolean>;
  default_team_id: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface TeamTypesTable {
  id: string;
  name: string;
  description: string | null;
  active: Generated<boolean>;
  order: Generated<number>;
  /** Per-team limits and features: `{ users: { limit }, instances: { limit }, devices: { limit },
   * teamBroker: { clients: { limit } } }`; a null or absent limit is no limit. */
  properties: ColumnType<Record<string, unknown>, string | undefined, string>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface InvitationsTable {
  id: string;
  team_id: string;
  invitor_id: string | null;
  /** The invited user; null when the invitation went to an email nobody has yet. */
  invitee_id: string | null;
  email: string | null;
  role: number;
  created_at: CreatedAt;
  sent_at: Timestamp;
  expires_at: Date;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  /** HMAC-SHA-256 of the cookie's value, keyed by the server secret. */
  digest: string;
  created_at: CreatedAt;
  /** Written at most once a minute per session, for the idle timeout. */
  last_seen_at: Timestamp;
  /** The fixed maximum age: no activity extends it. */
  expires_at: Date;
  /** An instance's editor session: reaches that instance's editor only, never the platform. */
  project_id: ColumnType<string | null, string | null | undefined, never>;
  /** An editor session a script made with the person's own token: kept while the password is
   *  expired, as that token is. */
  scripted: ColumnType<boolean, boolean | undefined, never>;
}

export interface TeamsTable {
  id: string;
  name: string;
  slug: string;
  /** The team type (its limits); the default type when not chosen. */
  type_id: Generated<string>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface TeamMembersTable {
  team_id: string;
  user_id: string;
  role: number;
  created_at: CreatedAt;
}

export interface AccessTokensTable {
  id: string;
  user_id: string;
  /** The token that created this one; revoking it revokes this one (ON DELETE CASCADE). */
  parent_id: string | null;
  name: string;
  /** HMAC-SHA-256 of the value, keyed by the server secret. The value itself is never stored. */
  digest: string;
  read_only: boolean;
  admin_opt_in: boolean;
  /** When true, only the teams in access_token_teams; an empty set then reaches no team. */
  team_restricted: boolean;
  expires_at: Date | null;
  last_used_at: Date | null;
  created_at: CreatedAt;
}

export interface AccessTokenTeamsTable {
  token_id: string;
  team_id: string;
}

export interface AuditLogTable {
  id: string;
  created_at: CreatedAt;
  event: string;
  /** What the entry is about: `platform`, `user` or `team` (later: application, project, device). */
  entity_type: string;
  entity_id: string | null;
  /** The team the entity belongs to, for the team's log. */
  team_id: string | null;
  /** The user who acted; null for the system. */
  actor_id: string | null;
  /** `api` for requests made with a token, null in a signed-in browser, `system` for the platform. */
  source: string | null;
  token_id: string | null;
  body: ColumnType<Record<string, unknown>, string, string>;
}

export interface TeamBrokerClientsTable {
  id: string;
  team_id: string;
  /** The bare name; MQTT clients connect as `<username>@<team_id>`. */
  username: string;
  /** scrypt, in the format of @flowplane/auth's hashPassword. */
  password_hash: string;
  /** `[{ action, pattern }]`. */
  acls: ColumnType<{ action: "subscribe" | "publish" | "both"; pattern: string }[], string, string>;
  owner_type: string | null;
  owner_id: string | null;
  version: Generated<number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface BrokerTokensTable {
  id: string;
  name: string;
  /** HMAC-SHA-256 of the value, keyed by the server secret. The value itself is never stored. */
  digest: string;
  created_by: string | null;
  last_used_at: Date | null;
  created_at: CreatedAt;
}

type Json<T = Record<string, unknown>> = ColumnType<T, string | undefined, string>;

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
  /** The snapshot the instance's devices should run. */
  device_target_snapshot_id: Generated<string | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
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
  created_at: CreatedAt;
  updated_at: Timestamp;
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

/** A setting administrators changed; a key without a row has its default. */
export interface PlatformSettingsTable {
  key: string;
  value: ColumnType<unknown, string, string>;
  updated_at: Timestamp;
}

export interface Database {
  platform_settings: PlatformSettingsTable;
  editor_authorization_codes: EditorAuthorizationCodesTable;
  device_registrations: DeviceRegistrationsTable;
  users: UsersTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  access_tokens: AccessTokensTable;
  access_token_teams: AccessTokenTeamsTable;
  audit_log: AuditLogTable;
  sessions: SessionsTable;
  team_types: TeamTypesTable;
  invitations: InvitationsTable;
  team_broker_clients: TeamBrokerClientsTable;
  broker_tokens: BrokerTokensTable;
  project_types: ProjectTypesTable;
  project_stacks: ProjectStacksTable;
  project_templates: ProjectTemplatesTable;
  applications: ApplicationsTable;
  projects: ProjectsTable;
  project_storage: ProjectStorageTable;
  snapshots: SnapshotsTable;
  devices: DevicesTable;
  device_groups: DeviceGroupsTable;
  device_provisioning_tokens: DeviceProvisioningTokensTable;
  team_library_entries: TeamLibraryEntriesTable;
  pipelines: PipelinesTable;
  pipeline_stages: PipelineStagesTable;
  operations: OperationsTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type SessionRow = Selectable<SessionsTable>;
export type TeamTypeRow = Selectable<TeamTypesTable>;
export type InvitationRow = Selectable<InvitationsTable>;
export type TeamRow = Selectable<TeamsTable>;
export type TeamUpdate = Updateable<TeamsTable>;
export type AccessTokenRow = Selectable<AccessTokensTable>;
export type TeamBrokerClientRow = Selectable<TeamBrokerClientsTable>;
export type BrokerTokenRow = Selectable<BrokerTokensTable>;
export type ProjectTypeRow = Selectable<ProjectTypesTable>;
export type ProjectStackRow = Selectable<ProjectStacksTable>;
export type ProjectTemplateRow = Selectable<ProjectTemplatesTable>;
export type ApplicationRow = Selectable<ApplicationsTable>;
export type ProjectRow = Selectable<ProjectsTable>;
export type SnapshotRow = Selectable<SnapshotsTable>;
export type DeviceRow = Selectable<DevicesTable>;
export type ProvisioningTokenRow = Selectable<DeviceProvisioningTokensTable>;
export type TeamLibraryEntryRow = Selectable<TeamLibraryEntriesTable>;
export type DeviceGroupRow = Selectable<DeviceGroupsTable>;
export type PipelineRow = Selectable<PipelinesTable>;
export type PipelineStageRow = Selectable<PipelineStagesTable>;
export type OperationRow = Selectable<OperationsTable>;

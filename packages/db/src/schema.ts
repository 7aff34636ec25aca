// The database as Kysely sees it: one interface per table. Row types for reads and writes are
// derived with Selectable / Insertable / Updateable rather than restated. The tables themselves are
// in schema-accounts.ts (accounts and teams) and schema-instances.ts (what teams run), schema-rollouts.ts.
import type { ColumnType, Insertable, Selectable, Updateable } from "kysely";
import type { Timestamp } from "./schema-columns";
import type {
  UsersTable,
  TeamTypesTable,
  InvitationsTable,
  SessionsTable,
  TeamsTable,
  TeamMembersTable,
  AccessTokensTable,
  AccessTokenTeamsTable,
  AuditLogTable,
  TeamBrokerClientsTable,
  BrokerTokensTable,
} from "./schema-accounts";
import type { RolloutDevicesTable, RolloutsTable } from "./schema-rollouts";
import type { NotificationsTable } from "./schema-notifications";
import type {
  EventRetentionTable,
  EventsTable,
  WebhookDeliveriesTable,
  WebhooksTable,
} from "./schema-events";
import type {
  ProjectTypesTable,
  ProjectStacksTable,
  ProjectTemplatesTable,
  ApplicationsTable,
  ProjectsTable,
  ProjectStorageTable,
  SnapshotsTable,
  DevicesTable,
  DeviceGroupsTable,
  TeamLibraryEntriesTable,
  DeviceProvisioningTokensTable,
  PipelinesTable,
  PipelineStagesTable,
  OperationsTable,
  DeviceRegistrationsTable,
  EditorAuthorizationCodesTable,
} from "./schema-instances";

/** A create's outcome under its caller's `Idempotency-Key` (migration idempotency-keys). */
export interface IdempotencyKeysTable {
  /** Whose key: `user:<id>`, or a provisioning token's `provisioning:<id>`. */
  caller: string;
  key: string;
  /** SHA-256 of the method, path and body: the same key with another request is refused. */
  request_digest: string;
  /** The outcome's status; null while the first request runs. */
  status: number | null;
  /** The outcome's JSON body (null: none, or still running). */
  body: string | null;
  created_at: Date;
  expires_at: Date;
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
  events: EventsTable;
  event_retention: EventRetentionTable;
  notifications: NotificationsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
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
  rollouts: RolloutsTable;
  rollout_devices: RolloutDevicesTable;
  idempotency_keys: IdempotencyKeysTable;
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
export type RolloutRow = Selectable<RolloutsTable>;
export type RolloutDeviceRow = Selectable<RolloutDevicesTable>;

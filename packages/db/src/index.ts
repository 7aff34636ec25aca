// The database: one Kysely schema and migration set, and the queries of each area.
export { type AccessFeed, accessFeed } from "./access-changes";
export * from "./accounts/index";
export * from "./applications";
export * from "./audit-log/index";
export * from "./broker";
export * from "./catalogue/index";
export * from "./create-db";
export * from "./dump";
export * from "./embedded-postgres";
export * from "./embedded-postgres-supervisor";
export {
  EmbeddedPostgresError,
  embeddedPostgresBinaries,
  embeddedPostgresUnavailable,
} from "./embedded-postgres-programs";
export * from "./errors";
export * from "./events/index";
export * from "./webhooks/index";
export type * from "./schema-events";
export * from "./notifications/index";
export type * from "./schema-notifications";
export * from "./ids";
export * from "./instances";
export * from "./library";
export * from "./metrics";
export * from "./pipelines";
export * from "./platform";
export * from "./search";
export * from "./schema";
export type * from "./schema-accounts";
export type * from "./schema-instances";
export * from "./snapshots";
export * from "./teams/index";
export * from "./tokens";
export { DEFAULT_TEAM_TYPE_ID } from "./migrations/2026-11-23T1300-team-sharing";
export {
  DEFAULT_PROJECT_TYPE_ID,
  DEFAULT_STACK_ID,
  DEFAULT_TEMPLATE_ID,
} from "./migrations/2026-11-24T1300-instances";
export * from "./device-channel";
export * from "./device-check-in";
export * from "./devices";
export * from "./device-provisioning-tokens";
export * from "./device-groups";
export * from "./device-registrations";
export * from "./device-editor";
export * from "./rollouts";
export type * from "./schema-rollouts";
export * from "./rollout-gate";
export * from "./writes";

export * from "./audit";
export * from "./audit-log";
export * from "./broker";
export * from "./catalogue";
export * from "./create-db";
export * from "./errors";
export * from "./ids";
export * from "./instances";
export * from "./invitations";
export * from "./members";
export * from "./schema";
export * from "./sessions";
export * from "./teams";
export * from "./team-types";
export * from "./tokens";
export * from "./users";
export { DEFAULT_TEAM_TYPE_ID } from "./migrations/2026-11-23T1300-team-sharing";
export {
  DEFAULT_PROJECT_TYPE_ID,
  DEFAULT_STACK_ID,
  DEFAULT_TEMPLATE_ID,
} from "./migrations/2026-11-24T1300-instances";

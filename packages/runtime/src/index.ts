export type {
  Driver,
  InstanceIsolation,
  InstanceSpec,
  LogEntry,
  LogPage,
  LogQuery,
  RuntimeState,
  RuntimeStatus,
} from "./driver";
export { ModuleInstallError } from "./driver";
export {
  DEFAULT_INSTANCE_USER_IDS,
  LocalDriver,
  type LocalDriverOptions,
  NODE_RED_VERSION,
} from "./local/driver";

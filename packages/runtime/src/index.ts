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
export { LocalDriver } from "./local/driver";
export {
  DEFAULT_INSTANCE_USER_IDS,
  type LocalDriverOptions,
  NODE_RED_VERSION,
} from "./local/options";

export type {
  Driver,
  InstanceSpec,
  LogEntry,
  LogPage,
  LogQuery,
  RuntimeState,
  RuntimeStatus,
} from "./driver";
export { LocalDriver, type LocalDriverOptions, NODE_RED_VERSION } from "./local/driver";

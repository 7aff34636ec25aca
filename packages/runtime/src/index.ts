export type {
  Driver,
  InstanceSpec,
  LogEntry,
  LogPage,
  LogQuery,
  RuntimeState,
  RuntimeStatus,
} from "./driver";

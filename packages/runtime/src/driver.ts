// The one surface the platform uses to run hosted Node-RED instances. The API calls these
// methods and nothing else: the local driver (processes on this machine) and a future
// Kubernetes driver (a Deployment, Service and Ingress per instance) take the same place.
// docs/drivers.md says what each call must do.

/** Everything a driver needs to (re)start one instance. Given in full on every call that starts
 *  Node-RED, so a driver keeps no copy of the platform's data it could get wrong. */
export interface InstanceSpec {
  /** The instance's UUID. */
  id: string;
  /** The instance's name (unique on the platform, DNS-safe). */
  name: string;
  /** The instance's team: its Node-RED shows the team's library (reached with its token). */
  teamId: string;
  /** The Node-RED version its stack names, e.g. "4.1.15". A driver refuses one it cannot run. */
  nodeRedVersion: string;
  /** Environment variables for the Node-RED process: the user's plus the platform's `FF_*`. */
  env: Record<string, string>;
  /** Where the instance reaches the platform (storage, editor sign-in), e.g. http://127.0.0.1:3000;
   *  a driver that hands the instance a socket to the platform (the local driver's
   *  `platformConnection`) uses only its path. "" runs Node-RED on its own (its file storage, no
   *  sign-in): the runtime's own tests only. */
  platformUrl: string;
  /** The instance's own token (`fpi_…`): reaches only this instance's storage routes. */
  token: string;
  /**
   * The modules its flows use beyond Node-RED's own, `{ "<package>": "<version>" }` (installed
   * from the palette, or carried by a snapshot): installed before Node-RED starts. A start whose
   * modules cannot be installed rejects with a ModuleInstallError and leaves Node-RED stopped.
   */
  modules?: Record<string, string>;
  /** Whether the editor's palette may install and remove modules (default: yes). */
  paletteInstall?: boolean;
}

/** What the runtime reports: the process's own state, not the platform's desired state. */
export type RuntimeState = "starting" | "running" | "stopped" | "crashed" | "absent";

export interface RuntimeStatus {
  state: RuntimeState;
  /**
   * Where the platform reaches the editor while Node-RED starts or runs: HTTP over the Unix
   * socket at `socketPath` (the driver's, in a directory the instance cannot write; no instance
   * has a TCP port). null when it does not run (stopped, crashed, absent).
   */
  endpoint: { socketPath: string } | null;
  /** For `crashed`: the exit code or signal, in words. */
  detail?: string;
}

export interface LogEntry {
  /** Milliseconds since the epoch; strictly increasing within one instance (a cursor). */
  ts: number;
  level: "info" | "warn" | "error" | "debug" | "trace" | "fatal" | "system";
  msg: string;
}

export interface LogPage {
  entries: LogEntry[];
}

export interface LogQuery {
  /** Entries after this `ts` (forwards), or before it when `backwards`. */
  cursor?: number;
  backwards?: boolean;
  limit: number;
}

/** How far an instance is kept from the rest of the machine: what administrators are told. */
export interface InstanceIsolation {
  /** `sandbox`: each Node-RED sees only its own files and processes (docs/drivers.md says what
   *  exactly); `none`: it runs as an ordinary process of the platform's user. */
  mode: "sandbox" | "none";
  /** Whose user id instances run under: one of their own each, or the platform's. */
  user: "per-instance" | "platform";
  /** Instances are refused a start without their sandbox (INSTANCE_ISOLATION=required). */
  required: boolean;
  /** `own`: each sandbox has a network namespace of its own (the outside world through NAT; not
   *  the host's loopback, not another instance); `host`: instances share the host's network. */
  network: "own" | "host";
  /** Why instances have no sandbox, share the platform's user id, or share the host's network. */
  reason?: string;
}

export interface Driver {
  /** A short name, e.g. "local". */
  readonly name: string;
  /** Claim what the instance needs (files, its address) without starting Node-RED. Idempotent. */
  create(spec: InstanceSpec): Promise<void>;
  /** Start Node-RED and resolve once its editor answers (or reject with why it could not). */
  start(spec: InstanceSpec): Promise<void>;
  /** Stop Node-RED; keep its files. Resolves once the process is gone. */
  stop(id: string): Promise<void>;
  /** Stop then start with the spec given (new env takes effect). */
  restart(spec: InstanceSpec): Promise<void>;
  /** Stop and release what a stopped instance would keep (its sockets); keep files. */
  suspend(id: string): Promise<void>;
  /** Stop and delete everything the driver holds for the instance (process, files, logs). */
  remove(id: string): Promise<void>;
  status(id: string): Promise<RuntimeStatus>;
  logs(id: string, query: LogQuery): Promise<LogPage>;
  /** Calls `listener` when an instance's runtime state changes on its own (a crash, an exit). */
  onStateChange(listener: (id: string, status: RuntimeStatus) => void): void;
  /** How instances are isolated from the machine and from each other (found once, then kept). */
  isolation(): Promise<InstanceIsolation>;
  /** The ids of every instance the driver holds anything for (a process, files), so that the
   *  platform can remove what no instance of its own owns any more (a deletion cut short). */
  ids(): Promise<string[]>;
  /** Stop every instance this driver runs (the platform is shutting down), and start none after:
   *  `create`, `start` and `restart` are refused from then on. Files are kept. */
  close(): Promise<void>;
}

/** Why an instance's modules could not be installed: npm's last words included. */
export class ModuleInstallError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message);
    this.name = "ModuleInstallError";
  }
}

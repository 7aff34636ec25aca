// The local driver: each instance is a Node-RED process on this machine (the `node-red` package
// this one depends on, so nothing is installed when an instance is created), in a sandbox of its
// own (sandbox.ts) with a network namespace of its own (network.ts) where they can be made, with
// its own directory under the driver's root:
//
//   <root>/<instanceId>/userDir/      Node-RED's user directory: all the instance can write
//                                     (/data in its sandbox); its modules go in node_modules/
//   <root>/<instanceId>/tmp/          its /tmp in the sandbox, emptied at every start
//   <root>/<instanceId>/editor.sock   where the platform reaches its editor (HTTP): a socket the
//                                     driver listens on and hands to Node-RED as a descriptor
//   <root>/<instanceId>/run/platform.sock  where its Node-RED reaches the platform (the storage
//                                     API), accepted by the driver; /run/flowplane in its sandbox
//   <root>/<instanceId>/output.jsonl  what the process printed, one LogEntry per line
//
// No instance listens on a TCP port: the sockets are in directories the instance cannot write,
// so that nothing the platform connects to (as root) is a path the tenant could change.
//
// Everything is private to the platform's user (0700 directories, 0600 files); when the platform
// runs as root, each instance runs under a host user id of its own, which owns its userDir and
// tmp (bound into its sandbox by the platform: sandbox.ts), and never as root: without ids of
// their own, instances are refused their start.
//
// The process's output is parsed into log entries (Node-RED's `[level]`), kept in memory for the
// logs call (the last `logLimit`) and appended to output.jsonl, which is read back when the
// platform restarts. A process that exits without being asked to is `crashed`.
import { type ChildProcess, spawn, type StdioOptions } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  closeSync,
  constants as fsConstants,
  createWriteStream,
  existsSync,
  openSync,
  realpathSync,
  renameSync,
  type WriteStream,
} from "node:fs";
import { access, chmod, chown, mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import { constants } from "node:os";
import { basename, dirname, join, parse, resolve, sep } from "node:path";
import { createInterface } from "node:readline";
import {
  type Driver,
  type InstanceIsolation,
  type InstanceSpec,
  type LogEntry,
  type LogPage,
  type LogQuery,
  ModuleInstallError,
  type RuntimeState,
  type RuntimeStatus,
} from "../driver";
import { chownTree, emptyDirectory, ownerOf } from "./files";
import { checkAllowed, installModules, type ModulesRunner } from "./modules";
import {
  closeNetwork,
  closeStaleNetworks,
  findNetworkTools,
  type NetworkTools,
  netnsName,
  netnsPath,
  openNetwork,
} from "./network";
import {
  type IsolationSetting,
  probeSandbox,
  SANDBOX_RUN_DIR,
  SANDBOX_USER_DIR,
  startSandboxed,
  withListenFd,
} from "./sandbox";

export interface LocalDriverOptions {
  /** Where instances' directories live, e.g. `<DATA_DIR>/instances`. */
  root: string;
  /**
   * Each connection an instance's Node-RED opens to the platform (its storage module, its
   * editor's sign-in, its team library: HTTP with its token), accepted on the instance's
   * platform socket (`<root>/<id>/run/platform.sock`, `/run/flowplane/platform.sock` in its
   * sandbox). The platform serves it as one of its own HTTP connections (e.g.
   * `httpServer.emit("connection", socket)`). Without it, no platform socket is made and
   * Node-RED calls `spec.platformUrl` over TCP (the runtime's own tests).
   */
  platformConnection?: (instanceId: string, socket: Socket) => void;
  /** How long Node-RED may take to answer after it is started. */
  startTimeoutMs?: number;
  /** How long a stop waits for Node-RED to exit before it is killed. */
  stopGraceMs?: number;
  /** Log entries kept per instance. */
  logLimit?: number;
  /** Variables every instance gets before its own (PATH, TZ, LANG: never the platform's secrets). */
  baseEnv?: Record<string, string>;
  /**
   * INSTANCE_ISOLATION. `auto` (default): every Node-RED in a sandbox where one can be made, else
   * an ordinary process (`isolation()` says so and why); `required`: an instance without its
   * sandbox is refused its start; `off`: never a sandbox.
   */
  isolation?: IsolationSetting;
  /**
   * When the platform runs as root: the host user ids instances run under, one each; the first is
   * their shared group, not a user. `false`: instances run as the platform's user.
   */
  userIds?: { min: number; max: number } | false;
  /** The bubblewrap executable (default `bwrap`, found on `baseEnv`'s PATH). */
  bwrap?: string;
  /** How long installing an instance's modules may take before it is given up. */
  installTimeoutMs?: number;
  /**
   * `own` (default): each sandbox in a network namespace of its own where one can be made;
   * `host`: sandboxes share the host's network (measurements of what the namespace costs).
   */
  network?: "own" | "host";
  /**
   * Ports of the platform's on the host's loopback that instances in a network namespace of their
   * own still reach, at the same port of their own 127.0.0.1 (the embedded team broker's MQTT
   * port): asked at each start, as a port may be known only once the platform listens.
   */
  platformPorts?: () => number[];
  /**
   * NPM_REGISTRY: the registry every install uses (at start and from the editor's palette),
   * enforced over an instance's own `/data/.npmrc`. None: npm's default registry.
   */
  npmRegistry?: string;
  /**
   * PALETTE_ALLOW_LIST: the only modules instances may install (names; `*` matches any text, as
   * in Node-RED's `externalModules.palette.allowList`). None: any.
   */
  paletteAllowList?: readonly string[];
}

/** Where executables are looked for when `baseEnv` has no PATH. */
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * Host ids for instances' users: a range no distribution or container manager hands out
 * (systemd's table of ranges leaves 1879048192-2147483647 unused), 65,535 instances.
 */
export const DEFAULT_INSTANCE_USER_IDS = { min: 1_879_048_192, max: 1_879_113_727 };

/** The version of the `node-red` package this driver runs. */
export const NODE_RED_VERSION: string = (
  runtimeRequire()("node-red/package.json") as { version: string }
).version;

/** Resolves modules as this package does, wherever the code calling it was bundled. */
function runtimeRequire(): NodeJS.Require {
  const here = createRequire(import.meta.url);
  return createRequire(here.resolve("@flowplane/runtime/package.json"));
}

const LEVELS = new Set<LogEntry["level"]>(["info", "warn", "error", "debug", "trace", "fatal"]);
/** Node-RED's console lines: `24 Nov 12:15:00 - [info] Server now running at …`. */
const NODE_RED_LINE = /^\d{1,2} \w{3} \d{2}:\d{2}:\d{2} - \[(\w+)\] (.*)$/;
/**
 * What Node-RED says (at info, English: the settings are ours) when its first start of the flows
 * has settled: started, or held back (missing types or modules, safe mode, flows stopped). Its
 * editor answers HTTP before that (it loads the flows without waiting), and a deploy that arrives
 * in between is replaced by the flows that load then.
 */
const FLOWS_SETTLED =
  /^(Started flows|Waiting for missing types to be registered:|Failed to load external modules required by this flow:|Flows stopped in safe mode|Stopped flows)/;

interface Instance {
  id: string;
  dir: string;
  /** The host user id it runs under, when instances have their own. */
  uid: number | undefined;
  child: ChildProcess | undefined;
  /** For a sandboxed child: the host pid of the sandbox's init, whose death ends all inside. */
  initPid: Promise<number | undefined> | undefined;
  state: RuntimeState;
  detail?: string;
  /** Set while a stop is asked for, so the exit is not a crash. */
  stopping: boolean;
  log: LogEntry[];
  logLoaded: boolean;
  output: WriteStream | undefined;
  lastTs: number;
  /** Serializes the calls on one instance: a start never races a stop. */
  queue: Promise<unknown>;
  /** Called when the running Node-RED says its first start of the flows has settled. */
  flowsSettled?: () => void;
  /** Settles once the last Node-RED has exited and what it held (its network namespace, its
   *  sockets) is released; its state changes only then. */
  ended: Promise<void>;
}

/** The system's CA bundle (Debian, Ubuntu, Alpine, Arch). */
const SYSTEM_CA_FILE = "/etc/ssl/certs/ca-certificates.crt";

/** Opening the driver's own files in an instance's directory: never through a link. */
const READ_NO_FOLLOW = fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW;
const APPEND_NO_FOLLOW =
  fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND | fsConstants.O_NOFOLLOW;

/** What an instance's id may be: it names its directory. */
const INSTANCE_ID = /^[A-Za-z0-9_-]{1,64}$/;

export class LocalDriver implements Driver {
  readonly name = "local";
  private readonly instances = new Map<string, Instance>();
  private readonly listeners: ((id: string, status: RuntimeStatus) => void)[] = [];
  private readonly startTimeoutMs: number;
  private readonly stopGraceMs: number;
  private readonly logLimit: number;
  private readonly redJs: string;
  private readonly settingsFile: string;
  private readonly root: string;
  private readonly setting: IsolationSetting;
  /** bubblewrap's path, once found (none: not installed). */
  private bwrap: string | undefined;
  /** What the sandbox binds read-only: Node.js (outside /usr), Node-RED's modules, settings. */
  private readonly readOnly: string[];
  private isolationFound: Promise<InstanceIsolation> | undefined;
  /** Set by `close`: nothing starts after it (a start queued behind the stops would outlive it). */
  private closed = false;
  /** Serializes the choice of user ids, so that two new instances never get the same one. */
  private userIdQueue: Promise<unknown> = Promise.resolve();
  /** npm's own script (npm-cli.js), once found (none: not installed). */
  private npmCli: Promise<string | undefined> | undefined;
  /** What makes network namespaces, once found (none: instances share the host's network). */
  private network: NetworkTools | undefined;
  /** The host's npmrc files a sandbox hides, once found. */
  private hidden: Promise<string[]> | undefined;

  constructor(private readonly options: LocalDriverOptions) {
    this.startTimeoutMs = options.startTimeoutMs ?? 60_000;
    this.stopGraceMs = options.stopGraceMs ?? 10_000;
    this.logLimit = options.logLimit ?? 1000;
    const require = runtimeRequire();
    this.redJs = realpathSync(require.resolve("node-red/red.js"));
    this.settingsFile = realpathSync(require.resolve("@flowplane/runtime/node-red-settings"));
    // Absolute: Node-RED runs in the instance's own directory, where a relative path would not
    // lead back here.
    this.root = resolve(options.root);
    this.setting = options.isolation ?? "auto";
    this.readOnly = sandboxReadOnly(this.redJs, this.settingsFile);
  }

  isolation(): Promise<InstanceIsolation> {
    this.isolationFound ??= this.findIsolation();
    return this.isolationFound;
  }

  onStateChange(listener: (id: string, status: RuntimeStatus) => void): void {
    this.listeners.push(listener);
  }

  create(spec: InstanceSpec): Promise<void> {
    return this.serialized(spec.id, async (instance) => {
      this.checkOpen();
      this.checkVersion(spec);
      await this.prepareFiles(instance, await this.isolation());
      if (instance.state === "absent") this.setState(instance, "stopped");
    });
  }

  start(spec: InstanceSpec): Promise<void> {
    return this.serialized(spec.id, (instance) => this.startNow(instance, spec));
  }

  stop(id: string): Promise<void> {
    return this.serialized(id, (instance) => this.stopNow(instance));
  }

  restart(spec: InstanceSpec): Promise<void> {
    return this.serialized(spec.id, async (instance) => {
      await this.stopNow(instance);
      await this.startNow(instance, spec);
    });
  }

  suspend(id: string): Promise<void> {
    return this.serialized(id, async (instance) => {
      // A stopped instance holds nothing but its files (no port, no namespace, no socket).
      await this.stopNow(instance);
    });
  }

  remove(id: string): Promise<void> {
    // A start under way is ended now rather than waited for: the instance's platform side is
    // going, so its Node-RED would wait out its timeout for flows it cannot have.
    const starting = this.instances.get(id);
    if (starting?.state === "starting") void this.stopNow(starting).catch(() => {});
    return this.serialized(id, async (instance) => {
      await this.stopNow(instance);
      instance.output?.end();
      instance.output = undefined;
      forgetSocketDirs(instance.dir);
      await removeInstanceFiles(instance.dir);
      this.instances.delete(id);
      this.emit(instance.id, { state: "absent", endpoint: null });
    });
  }

  async status(id: string): Promise<RuntimeStatus> {
    const instance = await this.load(id);
    return this.statusOf(instance);
  }

  async logs(id: string, query: LogQuery): Promise<LogPage> {
    const instance = await this.load(id);
    await this.loadLog(instance);
    const limit = Math.max(1, query.limit);
    const log = instance.log;
    if (query.backwards) {
      const before = query.cursor ?? Infinity;
      const end = upperIndex(log, before - 1);
      return { entries: log.slice(Math.max(0, end - limit), end) };
    }
    const start =
      query.cursor === undefined ? Math.max(0, log.length - limit) : upperIndex(log, query.cursor);
    return { entries: log.slice(start, start + limit) };
  }

  async ids(): Promise<string[]> {
    const entries = await readdir(this.root, { withFileTypes: true }).catch(() => []);
    const onDisk = entries
      .filter((entry) => entry.isDirectory() && INSTANCE_ID.test(entry.name))
      .map((entry) => entry.name);
    const running = [...this.instances.values()]
      .filter((instance) => instance.state !== "absent")
      .map((instance) => instance.id);
    return [...new Set([...onDisk, ...running])];
  }

  async close(): Promise<void> {
    this.closed = true;
    // A start under way waits for an editor that reads its flows from a platform that is closing:
    // it is ended now, outside the queue, so that the stops below do not wait out its timeout.
    for (const instance of this.instances.values()) {
      if (instance.state === "starting") void this.stopNow(instance).catch(() => {});
    }
    await Promise.all([...this.instances.keys()].map((id) => this.stop(id).catch(() => {})));
    for (const instance of this.instances.values()) instance.output?.end();
  }

  private checkOpen(): void {
    if (this.closed) throw new Error("the platform is shutting down: no instance starts now");
  }

  private checkVersion(spec: InstanceSpec): void {
    if (spec.nodeRedVersion !== NODE_RED_VERSION) {
      throw new Error(
        `the local driver runs Node-RED ${NODE_RED_VERSION}, not ${spec.nodeRedVersion}`,
      );
    }
  }

  private statusOf(instance: Instance): RuntimeStatus {
    return {
      state: instance.state,
      endpoint:
        instance.state === "starting" || instance.state === "running"
          ? { socketPath: socketPath(join(instance.dir, "editor.sock")) }
          : null,
      ...(instance.detail !== undefined && { detail: instance.detail }),
    };
  }

  /** The instance as known in memory or on disk (after a restart of the platform). */
  private async load(id: string): Promise<Instance> {
    if (!INSTANCE_ID.test(id)) throw new Error(`not an instance id: ${id}`);
    let instance = this.instances.get(id);
    if (instance) return instance;
    const dir = join(this.root, id);
    const exists = await stat(dir).then(
      () => true,
      () => false,
    );
    instance = this.instances.get(id) ?? {
      id,
      dir,
      uid: undefined,
      child: undefined,
      initPid: undefined,
      state: exists ? "stopped" : "absent",
      stopping: false,
      log: [],
      logLoaded: false,
      output: undefined,
      lastTs: 0,
      queue: Promise.resolve(),
      ended: Promise.resolve(),
    };
    this.instances.set(id, instance);
    return instance;
  }

  private async serialized<T>(id: string, work: (instance: Instance) => Promise<T>): Promise<T> {
    const instance = await this.load(id);
    const result = instance.queue.then(() => work(instance));
    instance.queue = result.catch(() => {});
    return result;
  }

  private async startNow(instance: Instance, spec: InstanceSpec): Promise<void> {
    this.checkOpen();
    this.checkVersion(spec);
    if (instance.state === "running" || instance.state === "starting") return;
    if (instance.state === "absent") throw new Error(`instance ${instance.id} was not created`);
    await this.loadLog(instance);
    const isolation = await this.isolation();
    const refusal = startRefusal(isolation);
    if (refusal) {
      const why = `Not started: ${refusal.why}`;
      this.system(instance, why);
      instance.detail = refusal.detail;
      instance.state = "crashed";
      this.emit(instance.id, this.statusOf(instance));
      throw new Error(why);
    }
    await this.prepareFiles(instance, isolation);
    instance.detail = undefined;
    instance.stopping = false;
    const sandboxed = isolation.mode === "sandbox";
    this.system(
      instance,
      `Starting Node-RED ${NODE_RED_VERSION}${sandboxed ? " in its sandbox" : ""}${isolation.network === "own" ? " with a network of its own" : ""}`,
    );
    if (!sandboxed) {
      this.system(
        instance,
        `Not isolated: its flows can read and change whatever the platform's user can (${isolation.reason})`,
      );
    }

    const userDir = sandboxed ? SANDBOX_USER_DIR : join(instance.dir, "userDir");
    const platform = await this.openPlatformSocket(instance, spec);
    let network: string | undefined;
    let editor: EditorSocket;
    try {
      await this.installModulesOf(instance, spec, sandboxed);
      network = await this.openNetworkOf(instance, isolation);
      editor = await listenEditor(instance.dir);
    } catch (error) {
      await this.release(instance, platform?.server, network);
      if (!(error instanceof ModuleInstallError)) {
        // Not the install (which says so itself): the namespace or the editor's socket.
        const why = error instanceof Error ? error.message : String(error);
        this.system(instance, `Not started: ${why}`);
        instance.detail = why;
        instance.state = "crashed";
        this.emit(instance.id, this.statusOf(instance));
      }
      throw error;
    }
    const env: NodeJS.ProcessEnv = {
      // Never the platform's own environment (its secrets): only what it chose to pass on.
      ...this.options.baseEnv,
      HOME: userDir,
      ...(sandboxed && { USER: "node-red", LOGNAME: "node-red" }),
      ...spec.env,
      NODE_ENV: "production",
      FLOWPLANE_STOP_ON_STDIN_END: "1",
      FLOWPLANE_PALETTE_INSTALL: spec.paletteInstall === false ? "0" : "1",
      ...this.npmEnv(),
      ...(spec.platformUrl && {
        FLOWPLANE_PLATFORM_URL: spec.platformUrl,
        FLOWPLANE_INSTANCE_ID: spec.id,
        FLOWPLANE_TEAM_ID: spec.teamId,
        // The token itself goes down descriptor 3: the environment stays readable in /proc.
        FLOWPLANE_INSTANCE_TOKEN_FD: "3",
        ...(platform && {
          FLOWPLANE_PLATFORM_SOCKET: sandboxed
            ? `${SANDBOX_RUN_DIR}/${PLATFORM_SOCKET}`
            : // Relative to its working directory (userDir): short, however deep DATA_DIR is.
              join("..", "run", PLATFORM_SOCKET),
        }),
      }),
    };
    // No --port: the editor listens on the descriptor it is handed (settings.cjs).
    const nodeRed = [this.redJs, "--settings", this.settingsFile, "--userDir", userDir];
    let child: ChildProcess;
    try {
      if (sandboxed) {
        const tmp = join(instance.dir, "tmp");
        await emptyDirectory(tmp, await ownerOf(tmp));
        const sandbox = startSandboxed({
          bwrap: this.bwrap!,
          hostname: spec.name.slice(0, 63) || "node-red",
          readOnly: this.readOnly,
          hidden: await this.hiddenFiles(),
          userDir: { path: join(instance.dir, "userDir"), writable: true },
          tmpDir: join(instance.dir, "tmp"),
          command: [process.execPath, ...nodeRed],
          ...(instance.uid !== undefined && { uid: instance.uid, gid: this.instanceGroup() }),
          env,
          output: "pipe",
          ...this.sandboxNetwork(network),
          ...(platform && { runDir: join(instance.dir, "run") }),
          listenFd: editor.fd,
        });
        child = sandbox.child;
        instance.initPid = sandbox.initPid;
      } else {
        const stdio: StdioOptions = ["pipe", "pipe", "pipe", "pipe"];
        child = spawn(process.execPath, nodeRed, {
          cwd: userDir,
          env: withListenFd(stdio, env, editor.fd),
          stdio,
        });
        for (const stream of child.stdio) stream?.on("error", () => {});
        instance.initPid = undefined;
      }
    } finally {
      // Only Node-RED accepts on the editor's socket from now on (see listenEditor).
      editor.handOver();
    }
    (child.stdio[3] as NodeJS.WritableStream).end(spec.platformUrl ? `${spec.token}\n` : "");
    instance.child = child;
    this.setState(instance, "starting");
    const flowsSettled = new Promise<"settled">((resolve) => {
      instance.flowsSettled = () => resolve("settled");
    });
    this.capture(instance, child.stdout!, "info");
    this.capture(instance, child.stderr!, "error");
    const exited = once(child, "exit").then(async ([code, signal]) => {
      await this.release(instance, platform?.server, network);
      this.exited(
        instance,
        child,
        code as number | null,
        signal as NodeJS.Signals | null,
        sandboxed,
      );
    });
    instance.ended = exited;
    child.once("error", (error) => this.system(instance, `Could not start: ${error.message}`));

    const deadline = Date.now() + this.startTimeoutMs;
    let ready = await Promise.race([
      this.waitForAnswer(editor.path, this.startTimeoutMs).then((answered) =>
        answered ? "ready" : "timeout",
      ),
      exited.then(() => "exited" as const),
    ]);
    if (ready === "ready") {
      // Running once the flows are in place too, so that a deploy right after is kept.
      let timer: NodeJS.Timeout | undefined;
      const settled = await Promise.race([
        flowsSettled,
        exited.then(() => "exited" as const),
        new Promise<"late">((resolve) => {
          timer = setTimeout(() => resolve("late"), Math.max(0, deadline - Date.now()));
        }),
      ]);
      clearTimeout(timer);
      if (settled === "exited") ready = "exited";
      if (settled === "late") {
        this.system(instance, "Node-RED answers but has not said that its flows started");
      }
    }
    instance.flowsSettled = undefined;
    if (ready === "ready" && instance.child === child) {
      this.setState(instance, "running");
      return;
    }
    if (ready === "timeout") {
      await this.stopNow(instance);
      throw new Error(`Node-RED did not answer within ${this.startTimeoutMs / 1000} s`);
    }
    throw new Error(`Node-RED exited while starting (${instance.detail ?? "unknown"})`);
  }

  /**
   * Installs the modules the instance's flows use, in its sandbox as its own user, before its
   * Node-RED starts. A failure is the instance's log and its state (`crashed`, with why), and
   * the start's rejection: Node-RED is not started, and nothing retries it by itself.
   */
  private async installModulesOf(
    instance: Instance,
    spec: InstanceSpec,
    sandboxed: boolean,
  ): Promise<void> {
    try {
      checkAllowed(spec.modules ?? {}, this.options.paletteAllowList);
      await installModules({
        modules: spec.modules ?? {},
        run: (args, onOutput) => this.runNpm(instance, spec, sandboxed, args, onOutput),
        log: (message) => this.system(instance, message),
      });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      this.system(instance, `Not started: ${why}`);
      instance.detail = why;
      instance.state = "crashed";
      this.emit(instance.id, this.statusOf(instance));
      throw error instanceof ModuleInstallError ? error : new ModuleInstallError(why, "");
    }
  }

  /**
   * node-red/modules.cjs (package.json, then npm), run in the instance's user directory as its
   * Node-RED would run (sandboxed or not): never by the platform's own process.
   */
  private async runNpm(
    instance: Instance,
    spec: InstanceSpec,
    sandboxed: boolean,
    args: readonly string[],
    onOutput: (text: string) => void,
  ): ReturnType<ModulesRunner> {
    this.npmCli ??= findNpm(this.options.baseEnv?.PATH ?? DEFAULT_PATH);
    // Without npm, modules.cjs says so only when there is something to install.
    const npmCli = (await this.npmCli) ?? "";
    const userDir = sandboxed ? SANDBOX_USER_DIR : join(instance.dir, "userDir");
    const env: NodeJS.ProcessEnv = {
      ...this.options.baseEnv,
      HOME: userDir,
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
      ...this.npmEnv(),
    };
    const script = join(dirname(this.settingsFile), "modules.cjs");
    const command = [process.execPath, script, npmCli, ...args, ...this.npmArgs()];
    let child: ChildProcess;
    let initPid: Promise<number | undefined> | undefined;
    // npm reaches the registry as flows reach the outside world: through a namespace of its own.
    const network = await this.openNetworkOf(instance, await this.isolation());
    if (sandboxed) {
      const sandbox = startSandboxed({
        bwrap: this.bwrap!,
        hostname: spec.name.slice(0, 63) || "node-red",
        readOnly: [...this.readOnly, ...(npmCli ? npmReadOnly(npmCli, this.readOnly) : [])],
        // The instance's own npm configuration too (a scope's registry): the operator's decides.
        hidden: [...(await this.hiddenFiles()), `${SANDBOX_USER_DIR}/.npmrc`],
        userDir: { path: join(instance.dir, "userDir"), writable: true },
        tmpDir: join(instance.dir, "tmp"),
        command,
        ...(instance.uid !== undefined && { uid: instance.uid, gid: this.instanceGroup() }),
        env,
        output: "pipe",
        ...this.sandboxNetwork(network),
      });
      child = sandbox.child;
      initPid = sandbox.initPid;
      (child.stdio[3] as NodeJS.WritableStream | null)?.end();
    } else {
      child = spawn(command[0]!, command.slice(1), {
        cwd: userDir,
        env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      for (const stream of child.stdio) stream?.on("error", () => {});
    }
    (child.stdio[0] as NodeJS.WritableStream | null)?.end();
    let output = "";
    const keep = (chunk: Buffer) => {
      const text = chunk.toString();
      output += text;
      // Bounded; the first line (modules.cjs's own) is kept whatever npm prints after it.
      if (output.length > 64 * 1024) output = output.slice(0, 1024) + output.slice(-63 * 1024);
      onOutput(text);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const timeoutMs = this.options.installTimeoutMs ?? 300_000;
    const code = await new Promise<number | null>((resolveCode) => {
      const timer = setTimeout(() => {
        output += `\nnpm ERR! gave up after ${timeoutMs / 1000} s`;
        void (async () => {
          const pid = await initPid;
          try {
            if (pid !== undefined) process.kill(pid, "SIGKILL");
          } catch {
            // Already gone.
          }
          child.kill("SIGKILL");
        })();
      }, timeoutMs);
      child.once("error", (error) => {
        clearTimeout(timer);
        output += `\n${error.message}`;
        resolveCode(null);
      });
      child.once("exit", (exitCode) => {
        clearTimeout(timer);
        resolveCode(exitCode);
      });
    });
    if (network && this.network) await closeNetwork(this.network, network);
    return { code, output };
  }

  /**
   * npm's configuration for every npm an instance runs (at start, and the editor's palette in
   * Node-RED's process): the operator's registry, and user and global files of the platform's
   * (empty), so that neither the host's global npmrc nor `~/.npmrc` apply. Variables outrank an
   * instance's `/data/.npmrc` (npm's project configuration).
   */
  private npmEnv(): Record<string, string> {
    const settings = dirname(this.settingsFile);
    return {
      npm_config_userconfig: join(settings, "npmrc-user"),
      npm_config_globalconfig: join(settings, "npmrc-global"),
      ...(this.options.npmRegistry && { npm_config_registry: this.options.npmRegistry }),
      // The system's CA bundle (the sandbox sees /etc/ssl/certs), as Debian's global npmrc had it:
      // a registry behind a CA of the operator's own works once the system trusts that CA.
      ...(existsSync(SYSTEM_CA_FILE) && { npm_config_cafile: SYSTEM_CA_FILE }),
      ...(this.options.paletteAllowList && {
        FLOWPLANE_PALETTE_ALLOW_LIST: JSON.stringify(this.options.paletteAllowList),
      }),
    };
  }

  /** The same on npm's command line, where the driver runs it. */
  private npmArgs(): string[] {
    const settings = dirname(this.settingsFile);
    return [
      `--userconfig=${join(settings, "npmrc-user")}`,
      `--globalconfig=${join(settings, "npmrc-global")}`,
      ...(this.options.npmRegistry ? [`--registry=${this.options.npmRegistry}`] : []),
    ];
  }

  /** The host's global npm configuration files, which a sandbox must not show (once found). */
  private hiddenFiles(): Promise<string[]> {
    this.hidden ??= (async () => {
      const npmCli = await (this.npmCli ??= findNpm(this.options.baseEnv?.PATH ?? DEFAULT_PATH));
      const node = dirname(dirname(realpathSync(process.execPath)));
      const candidates = [
        "/usr/etc/npmrc",
        "/usr/local/etc/npmrc",
        join(node, "etc", "npmrc"),
        ...(npmCli ? [join(dirname(dirname(npmCli)), "npmrc")] : []),
      ];
      const found: string[] = [];
      for (const path of new Set(candidates)) {
        if (
          await stat(path).then(
            (info) => info.isFile(),
            () => false,
          )
        )
          found.push(path);
      }
      return found;
    })();
    return this.hidden;
  }

  private async stopNow(instance: Instance): Promise<void> {
    const child = instance.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      // Nothing runs: asked to stop, a crashed instance is now simply stopped.
      if (instance.state !== "absent") {
        instance.detail = undefined;
        this.setState(instance, "stopped");
      }
      return;
    }
    instance.stopping = true;
    const exited = once(child, "exit");
    // Node-RED stops its flows and exits when its stdin ends (settings.cjs): a signal would reach
    // the sandbox's init, not Node-RED.
    child.stdin?.end();
    const timer = setTimeout(() => void this.kill(instance, child), this.stopGraceMs);
    await exited;
    clearTimeout(timer);
    await instance.ended;
  }

  /**
   * Ends the process at once. A sandbox's init is killed rather than bubblewrap: every process
   * inside dies with it, and bubblewrap exits only once they are gone (the port is free).
   */
  private async kill(instance: Instance, child: ChildProcess): Promise<void> {
    const initPid = await instance.initPid;
    if (initPid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(initPid, "SIGKILL");
        return;
      } catch {
        // Already gone: bubblewrap itself follows.
      }
    }
    child.kill("SIGKILL");
  }

  /** How instances are isolated here: tries a sandbox as an instance would have it. */
  private async findIsolation(): Promise<InstanceIsolation> {
    const required = this.setting === "required";
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    // Instances need no way through it (their directories are bound by the platform): an earlier
    // version let their group through (0710).
    await chmod(this.root, 0o700);
    if (this.setting === "off") {
      return {
        mode: "none",
        user: "platform",
        required,
        network: "host",
        reason: "INSTANCE_ISOLATION=off",
      };
    }
    const name = this.options.bwrap ?? "bwrap";
    this.bwrap = await findExecutable(name, this.options.baseEnv?.PATH ?? DEFAULT_PATH);
    if (!this.bwrap) {
      const reason = `${name} was not found (Debian and Ubuntu: apt-get install bubblewrap)`;
      return { mode: "none", user: "platform", required, network: "host", reason };
    }
    const probe = {
      bwrap: this.bwrap,
      readOnly: this.readOnly,
      // Its own /data: any directory all may read (DATA_DIR is the platform's alone).
      dir: dirname(this.settingsFile),
      // Node.js runs and finds Node-RED and the settings where an instance will.
      command: [
        process.execPath,
        "-e",
        `const fs = require("node:fs"); fs.accessSync(${JSON.stringify(this.redJs)}, fs.constants.R_OK); fs.accessSync(${JSON.stringify(this.settingsFile)}, fs.constants.R_OK);`,
      ],
      env: { PATH: "/usr/bin:/bin" },
    };
    const group = this.instanceGroup();
    if (group !== undefined) {
      const refused = await probeSandbox({ ...probe, uid: group + 1, gid: group });
      if (!refused) return this.withNetwork({ mode: "sandbox", user: "per-instance", required });
      // Never the platform's own user instead: that is root.
      return {
        mode: "none",
        user: "platform",
        required,
        network: "host",
        reason: `instances cannot have user ids of their own: ${refused}`,
      };
    }
    const refused = await probeSandbox(probe);
    if (!refused) return this.withNetwork({ mode: "sandbox", user: "platform", required });
    return { mode: "none", user: "platform", required, network: "host", reason: refused };
  }

  /**
   * A sandbox's network: a namespace of its own where the tools are here and one can be made,
   * else the host's, with why. Namespaces a platform that died left behind are deleted.
   */
  private async withNetwork(
    sandbox: Omit<InstanceIsolation, "network">,
  ): Promise<InstanceIsolation> {
    if (this.options.network === "host") {
      const reason = [
        sandbox.reason,
        "instances share the host's network: the driver's network option",
      ];
      return { ...sandbox, network: "host", reason: reason.filter(Boolean).join("; ") };
    }
    const found = await findNetworkTools(this.options.baseEnv?.PATH ?? DEFAULT_PATH);
    if ("reason" in found) {
      const reason = [sandbox.reason, `instances share the host's network: ${found.reason}`];
      return { ...sandbox, network: "host", reason: reason.filter(Boolean).join("; ") };
    }
    this.network = found.tools;
    const ids = await readdir(this.root).catch(() => [] as string[]);
    await closeStaleNetworks(found.tools, new Set(ids.map((id) => netnsName(this.root, id))));
    return { ...sandbox, network: "own" };
  }

  /** The instances' shared group, when each runs under a user id of its own (root only). */
  private instanceGroup(): number | undefined {
    const ids = this.options.userIds ?? DEFAULT_INSTANCE_USER_IDS;
    if (!ids || this.setting === "off" || process.getuid?.() !== 0) return undefined;
    if (ids.min < 1 || ids.max >= 4_294_967_295 || ids.max <= ids.min) {
      throw new Error(`not a range of user ids: ${ids.min}-${ids.max}`);
    }
    return ids.min;
  }

  /**
   * The instance's directories with the modes and owners its isolation needs: created when
   * missing, given to the instance's own user id (chosen once, kept by the userDir's owner).
   */
  private async prepareFiles(instance: Instance, isolation: InstanceIsolation): Promise<void> {
    const userDir = join(instance.dir, "userDir");
    const tmp = join(instance.dir, "tmp");
    await mkdir(instance.dir, { recursive: true, mode: 0o700 });
    await mkdir(userDir, { recursive: true, mode: 0o700 });
    if (isolation.mode === "sandbox") await mkdir(tmp, { recursive: true, mode: 0o700 });
    // A running Node-RED keeps what it runs with: its files are never re-owned under it.
    if (instance.child) return;
    const group = isolation.user === "per-instance" ? this.instanceGroup() : undefined;
    if (group === undefined) {
      instance.uid = undefined;
      return;
    }
    // The platform's alone: the sandbox is given userDir and tmp by the platform (sandbox.ts).
    await chown(instance.dir, process.getuid!(), process.getgid!());
    await chmod(instance.dir, 0o700);
    const owner = (await stat(userDir)).uid;
    const uid = await this.userIdFor(instance, owner, group);
    if (uid !== owner) await chownTree(userDir, uid, group);
    if ((await stat(tmp)).uid !== uid) await chownTree(tmp, uid, group);
    instance.uid = uid;
  }

  /** The instance's user id: the one its userDir has, else the lowest no other instance has. */
  private userIdFor(instance: Instance, owner: number, group: number): Promise<number> {
    const { max } = (this.options.userIds || DEFAULT_INSTANCE_USER_IDS) as { max: number };
    const chosen = this.userIdQueue.then(async () => {
      const taken = new Set<number>();
      for (const entry of await readdir(this.root)) {
        if (entry === instance.id) continue;
        const other = await stat(join(this.root, entry, "userDir")).catch(() => undefined);
        if (other) taken.add(other.uid);
      }
      if (owner > group && owner <= max && !taken.has(owner)) return owner;
      for (let uid = group + 1; uid <= max; uid++) if (!taken.has(uid)) return uid;
      throw new Error(`no free user id in ${group + 1}-${max} for another instance`);
    });
    this.userIdQueue = chosen.catch(() => {});
    return chosen;
  }

  private exited(
    instance: Instance,
    child: ChildProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
    sandboxed: boolean,
  ): void {
    if (instance.child !== child) return;
    instance.child = undefined;
    instance.initPid = undefined;
    // bubblewrap exits with 128 + the signal that killed what ran inside.
    const inside = sandboxed && code !== null && code > 128 ? signalName(code - 128) : undefined;
    const how = signal
      ? `killed by ${signal}`
      : inside
        ? `killed by ${inside}`
        : `exit code ${code}`;
    if (instance.stopping) {
      instance.stopping = false;
      instance.detail = undefined;
      this.system(instance, `Node-RED stopped (${how})`);
      this.setState(instance, "stopped");
    } else {
      instance.detail = how;
      this.system(instance, `Node-RED exited unexpectedly (${how})`);
      this.setState(instance, "crashed");
    }
  }

  private setState(instance: Instance, state: RuntimeState): void {
    if (instance.state === state) return;
    instance.state = state;
    this.emit(instance.id, this.statusOf(instance));
  }

  private emit(id: string, status: RuntimeStatus): void {
    for (const listener of this.listeners) {
      try {
        listener(id, status);
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** Whether anything answers HTTP on the editor's socket before the time is up. */
  private async waitForAnswer(socketPath: string, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await answersHttp(socketPath, 2_000)) return true;
      // A refused connection on a local socket costs microseconds: asking often starts sooner.
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return false;
  }

  /**
   * The instance's platform socket, listening while its Node-RED (or npm) runs, when the
   * platform takes connections (`platformConnection`) and the instance calls it: every
   * connection is handed to the platform as it comes. It is in `<dir>/run`, the platform's
   * (0710, the instances' group passes), and only the instance's user may connect (0600, its own).
   */
  private async openPlatformSocket(
    instance: Instance,
    spec: InstanceSpec,
  ): Promise<{ server: Server } | undefined> {
    const accept = this.options.platformConnection;
    if (!accept || !spec.platformUrl) return undefined;
    const runDir = join(instance.dir, "run");
    const group = instance.uid !== undefined ? this.instanceGroup() : undefined;
    await mkdir(runDir, { recursive: true, mode: 0o700 });
    if (group !== undefined) {
      await chown(runDir, process.getuid!(), group);
      await chmod(runDir, 0o710);
    }
    const real = join(runDir, PLATFORM_SOCKET);
    // The directory is the platform's: whatever is at the path was left by an earlier run.
    await rm(real, { force: true });
    const path = socketPath(real);
    const server = createServer((socket) => {
      socket.on("error", () => {});
      try {
        accept(instance.id, socket);
      } catch {
        socket.destroy();
      }
    });
    await new Promise<void>((resolveListen, fail) => {
      server.once("error", fail);
      server.listen(path, () => {
        server.off("error", fail);
        resolveListen();
      });
    });
    server.on("error", () => {});
    try {
      if (group !== undefined) await chown(path, instance.uid!, group);
      await chmod(path, 0o600);
    } catch (error) {
      server.close();
      throw error;
    }
    return { server };
  }

  /**
   * The network namespace the instance's next sandbox runs in, made now; undefined where
   * instances share the host's network. One that cannot be made fails the start (or the install).
   */
  private async openNetworkOf(
    instance: Instance,
    isolation: InstanceIsolation,
  ): Promise<string | undefined> {
    if (isolation.mode !== "sandbox" || isolation.network !== "own" || !this.network) {
      return undefined;
    }
    const name = netnsName(this.root, instance.id);
    try {
      await openNetwork(this.network, name, this.options.platformPorts?.() ?? []);
    } catch (error) {
      throw new Error(`no network namespace could be made: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return name;
  }

  private sandboxNetwork(network: string | undefined) {
    return network && this.network
      ? { network: { nsenter: this.network.nsenter, netnsPath: netnsPath(network) } }
      : {};
  }

  /** Releases what a Node-RED held once it has exited: its platform socket, its namespace and
   *  the editor's socket file. */
  private async release(
    instance: Instance,
    platform: Server | undefined,
    network: string | undefined,
  ): Promise<void> {
    // libuv removes the socket's file as it closes the listener.
    platform?.close();
    if (network && this.network) await closeNetwork(this.network, network);
    await rm(join(instance.dir, "editor.sock"), { force: true });
  }

  private capture(instance: Instance, stream: NodeJS.ReadableStream, fallback: LogEntry["level"]) {
    createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
      const match = NODE_RED_LINE.exec(line);
      const level = match && LEVELS.has(match[1] as LogEntry["level"]) ? match[1] : undefined;
      if (level === "info" && FLOWS_SETTLED.test(match![2]!)) instance.flowsSettled?.();
      this.append(
        instance,
        (level as LogEntry["level"]) ?? fallback,
        match && level ? match[2]! : line,
      );
    });
  }

  private system(instance: Instance, msg: string): void {
    this.append(instance, "system", msg);
  }

  private append(instance: Instance, level: LogEntry["level"], msg: string): void {
    // Strictly increasing, so that a timestamp is a cursor.
    const ts = Math.max(Date.now(), instance.lastTs + 1);
    instance.lastTs = ts;
    const entry: LogEntry = { ts, level, msg };
    instance.log.push(entry);
    if (instance.log.length > this.logLimit)
      instance.log.splice(0, instance.log.length - this.logLimit);
    if (!instance.output) {
      instance.output = createWriteStream(join(instance.dir, "output.jsonl"), {
        // Never through a link, should one ever be there (open()'s flags: Node takes them too).
        flags: APPEND_NO_FOLLOW as unknown as string,
        mode: 0o600,
      });
      // The log in memory still has it; a full disk must not take the platform down.
      instance.output.on("error", () => {});
    }
    instance.output.write(`${JSON.stringify(entry)}\n`);
  }

  /** The last `logLimit` entries of output.jsonl, once, before anything is added. */
  private async loadLog(instance: Instance): Promise<void> {
    if (instance.logLoaded) return;
    instance.logLoaded = true;
    const text = await readFile(join(instance.dir, "output.jsonl"), {
      encoding: "utf8",
      flag: READ_NO_FOLLOW,
    }).catch(() => "");
    const earlier: LogEntry[] = [];
    for (const line of text.split("\n").slice(-this.logLimit - 1)) {
      try {
        const entry = JSON.parse(line) as LogEntry;
        if (typeof entry.ts === "number" && typeof entry.msg === "string") earlier.push(entry);
      } catch {
        // A line cut short by a crash of the platform.
      }
    }
    instance.log = [...earlier, ...instance.log].slice(-this.logLimit);
    instance.lastTs = Math.max(instance.lastTs, earlier.at(-1)?.ts ?? 0);
  }
}

/** The platform socket's name in `<instance dir>/run` (in the sandbox, /run/flowplane). */
const PLATFORM_SOCKET = "platform.sock";

interface EditorSocket {
  /** Where the editor answers once Node-RED listens: `<instance dir>/editor.sock`. */
  path: string;
  /** The listening socket's descriptor, to hand to Node-RED. */
  fd: number;
  /** After the spawn: the socket takes its name and the platform's copy is closed. */
  handOver(): void;
}

/**
 * The editor's socket: listened on by the driver (in the instance's directory, which is the
 * platform's: never a path the tenant could turn into a link) and handed to Node-RED as a
 * descriptor, on which it accepts (settings.cjs). It is made under a temporary name and renamed
 * once Node-RED has its copy, because libuv removes a listener's file when the platform closes
 * its own copy; connections made before Node-RED accepts wait in the backlog.
 */
async function listenEditor(dir: string): Promise<EditorSocket> {
  const real = join(dir, "editor.sock");
  const path = socketPath(real);
  const realTemporary = join(dir, `.e${randomBytes(4).toString("hex")}`);
  const temporary = socketPath(realTemporary);
  await rm(real, { force: true });
  const server = createServer();
  await new Promise<void>((resolveListen, fail) => {
    server.once("error", fail);
    server.listen(temporary, () => {
      server.off("error", fail);
      resolveListen();
    });
  });
  server.on("error", () => {});
  const fd = (server as unknown as { _handle: { fd: number } })._handle.fd;
  return {
    path,
    fd,
    handOver() {
      try {
        renameSync(realTemporary, real);
        chmodSync(real, 0o600);
      } finally {
        server.close();
      }
    },
  };
}

/** Directories (the platform's own) held open for the sockets in them, by path. */
const socketDirs = new Map<string, number>();

/**
 * A path for the Unix socket at `path` that fits: the kernel keeps 107 bytes of a socket's path,
 * and DATA_DIR may be deep (a clone's `.data`). A longer one is reached through a descriptor of
 * its directory, held open by this process (`/proc/self/fd/<n>/<name>`, which Linux resolves
 * like any path): valid in this process only, which is the one that listens and connects.
 */
function socketPath(path: string): string {
  if (Buffer.byteLength(path) <= 107) return path;
  const dir = dirname(path);
  let fd = socketDirs.get(dir);
  if (fd === undefined) {
    fd = openSync(dir, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW);
    socketDirs.set(dir, fd);
  }
  const alias = `/proc/self/fd/${fd}/${basename(path)}`;
  if (Buffer.byteLength(alias) > 107) throw new Error(`${path} is too long for a Unix socket`);
  return alias;
}

/** Closes the descriptors held for sockets in `dir` and below (the directory is going). */
function forgetSocketDirs(dir: string): void {
  for (const [held, fd] of socketDirs) {
    if (held === dir || held.startsWith(dir + sep)) {
      socketDirs.delete(held);
      try {
        closeSync(fd);
      } catch {
        // Already closed.
      }
    }
  }
}

/** Whether an HTTP server answers (anything) on the Unix socket at `socketPath`. */
function answersHttp(socketPath: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolveAnswer) => {
    const request = httpRequest({ socketPath, path: "/", method: "GET", timeout: timeoutMs });
    request.on("response", (response) => {
      response.resume();
      resolveAnswer(true);
    });
    request.on("timeout", () => request.destroy());
    request.on("error", () => resolveAnswer(false));
    request.end();
  });
}

/**
 * Why no instance may start here, if so: INSTANCE_ISOLATION=required without a sandbox, or a
 * platform run as root whose instances cannot have user ids of their own (they would be root).
 */
function startRefusal(isolation: InstanceIsolation): { why: string; detail: string } | undefined {
  if (isolation.mode === "none" && isolation.required) {
    return {
      why: `INSTANCE_ISOLATION=required and no sandbox can be made (${isolation.reason})`,
      detail: "refused: no sandbox (INSTANCE_ISOLATION=required)",
    };
  }
  if (isolation.user === "platform" && process.getuid?.() === 0) {
    return {
      why: `the platform runs as root and its instances cannot run under user ids of their own (${isolation.reason ?? "INSTANCE_USER_IDS is off"}): an instance never runs as root. Run the platform as an ordinary user, or make the sandbox work (bubblewrap, INSTANCE_ISOLATION=auto)`,
      detail: "refused: it would run as root",
    };
  }
  return undefined;
}

/** The index of the first entry with `ts` greater than `ts` (log entries are sorted by ts). */
function upperIndex(log: readonly LogEntry[], ts: number): number {
  let low = 0;
  let high = log.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (log[middle]!.ts <= ts) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** `name` when it is a path, else the first executable of that name on `path`. */
async function findExecutable(name: string, path: string): Promise<string | undefined> {
  const candidates = name.includes("/")
    ? [name]
    : path.split(":").flatMap((dir) => (dir ? [join(dir, name)] : []));
  for (const candidate of candidates) {
    try {
      await access(candidate, fsConstants.X_OK);
      return resolve(candidate);
    } catch {
      // Not there.
    }
  }
  return undefined;
}

/** npm's script, found on `path` (the `npm` there is a link to it, or a wrapper beside it). */
async function findNpm(path: string): Promise<string | undefined> {
  const npm = await findExecutable("npm", path);
  if (!npm) return undefined;
  const real = realpathSync(npm);
  if (real.endsWith(".js")) return real;
  // A wrapper script (a Node.js tarball's bin/npm): its npm-cli.js is in lib/node_modules.
  const beside = join(dirname(dirname(real)), "lib", "node_modules", "npm", "bin", "npm-cli.js");
  return (await access(beside).then(
    () => true,
    () => false,
  ))
    ? beside
    : undefined;
}

/** npm's own directory, when the sandbox does not already see it (under /usr or beside Node.js). */
function npmReadOnly(npmCli: string, readOnly: readonly string[]): string[] {
  const npmDir = dirname(dirname(npmCli));
  return [...readOnly, "/usr"].some((outer) => npmDir === outer || npmDir.startsWith(outer + sep))
    ? []
    : [npmDir];
}

function signalName(number: number): NodeJS.Signals | undefined {
  return (Object.entries(constants.signals) as [NodeJS.Signals, number][]).find(
    ([, value]) => value === number,
  )?.[0];
}

/**
 * Deletes an instance's directory: what is in its userDir and tmp (the tenant's) as their owner
 * without following a link, then what is left (the platform's own files, two empty directories).
 */
async function removeInstanceFiles(dir: string): Promise<void> {
  for (const tenant of [join(dir, "userDir"), join(dir, "tmp")]) {
    // What its owner may not delete (a file the platform left there) goes as the platform, still
    // without following a link.
    await emptyDirectory(tenant, await ownerOf(tenant)).catch(() => emptyDirectory(tenant));
  }
  await rm(dir, { recursive: true, force: true });
}

/**
 * The host directories a sandbox needs besides /usr, bound read-only where they are: Node.js's
 * installation when it is elsewhere (nvm, a tarball), the outermost node_modules above Node-RED
 * (its dependencies are found through it, whatever the package manager's layout), and the
 * directory of settings.cjs and platform.cjs.
 */
function sandboxReadOnly(redJs: string, settingsFile: string): string[] {
  const node = realpathSync(process.execPath);
  const paths = [dirname(dirname(node)), outermostModules(redJs), dirname(settingsFile)];
  const kept: string[] = [];
  for (const path of paths.sort((a, b) => a.length - b.length)) {
    if ([...kept, "/usr"].some((outer) => path === outer || path.startsWith(outer + sep))) continue;
    kept.push(path);
  }
  return kept;
}

function outermostModules(file: string): string {
  const { root } = parse(file);
  const parts = file.slice(root.length).split(sep);
  const first = parts.indexOf("node_modules");
  return first === -1 ? dirname(dirname(file)) : root + parts.slice(0, first + 1).join(sep);
}

// The local driver: each instance is a Node-RED process on this machine (the `node-red` package
// this one depends on, so nothing is installed when an instance is created), bound to loopback on
// a port from a configured range, with its own directory under the driver's root:
//
//   <root>/<instanceId>/userDir/      Node-RED's user directory
//   <root>/<instanceId>/port          the port it was given, kept across restarts of the platform
//   <root>/<instanceId>/output.jsonl  what the process printed, one LogEntry per line
//
// The process's output is parsed into log entries (Node-RED's `[level]`), kept in memory for the
// logs call (the last `logLimit`) and appended to output.jsonl, which is read back when the
// platform restarts. A process that exits without being asked to is `crashed`.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type {
  Driver,
  InstanceSpec,
  LogEntry,
  LogPage,
  LogQuery,
  RuntimeState,
  RuntimeStatus,
} from "../driver";

export interface LocalDriverOptions {
  /** Where instances' directories live, e.g. `<DATA_DIR>/instances`. */
  root: string;
  /** The ports instances listen on, both ends included. */
  ports: { min: number; max: number };
  /** The loopback address Node-RED binds to. */
  host?: string;
  /** How long Node-RED may take to answer after it is started. */
  startTimeoutMs?: number;
  /** How long a stop waits for Node-RED to exit before it is killed. */
  stopGraceMs?: number;
  /** Log entries kept per instance. */
  logLimit?: number;
  /** Variables every instance gets before its own (PATH, TZ, LANG: never the platform's secrets). */
  baseEnv?: Record<string, string>;
}

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

interface Instance {
  id: string;
  dir: string;
  port: number | undefined;
  child: ChildProcess | undefined;
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
}

export class LocalDriver implements Driver {
  readonly name = "local";
  private readonly instances = new Map<string, Instance>();
  private readonly listeners: ((id: string, status: RuntimeStatus) => void)[] = [];
  private readonly host: string;
  private readonly startTimeoutMs: number;
  private readonly stopGraceMs: number;
  private readonly logLimit: number;
  private readonly redJs: string;
  private readonly settingsFile: string;

  constructor(private readonly options: LocalDriverOptions) {
    if (
      options.ports.min < 1 ||
      options.ports.max > 65535 ||
      options.ports.min > options.ports.max
    ) {
      throw new Error(`not a port range: ${options.ports.min}-${options.ports.max}`);
    }
    this.host = options.host ?? "127.0.0.1";
    this.startTimeoutMs = options.startTimeoutMs ?? 60_000;
    this.stopGraceMs = options.stopGraceMs ?? 10_000;
    this.logLimit = options.logLimit ?? 1000;
    const require = runtimeRequire();
    this.redJs = require.resolve("node-red/red.js");
    this.settingsFile = require.resolve("@flowplane/runtime/node-red-settings");
  }

  onStateChange(listener: (id: string, status: RuntimeStatus) => void): void {
    this.listeners.push(listener);
  }

  create(spec: InstanceSpec): Promise<void> {
    return this.serialized(spec.id, async (instance) => {
      this.checkVersion(spec);
      await mkdir(join(instance.dir, "userDir"), { recursive: true });
      // The port is the editor's address: given now, so that the instance has its URL at once.
      await this.assignPort(instance);
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
      await this.stopNow(instance);
      // The port goes back to the range; the next start takes whichever is free.
      instance.port = undefined;
      await rm(join(instance.dir, "port"), { force: true });
    });
  }

  remove(id: string): Promise<void> {
    return this.serialized(id, async (instance) => {
      await this.stopNow(instance);
      instance.output?.end();
      instance.output = undefined;
      await rm(instance.dir, { recursive: true, force: true });
      this.instances.delete(id);
      this.emit(instance.id, { state: "absent", url: null });
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

  async close(): Promise<void> {
    await Promise.all([...this.instances.keys()].map((id) => this.stop(id).catch(() => {})));
    for (const instance of this.instances.values()) instance.output?.end();
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
      url:
        instance.port !== undefined && instance.state !== "absent"
          ? `http://${this.host}:${instance.port}`
          : null,
      ...(instance.detail !== undefined && { detail: instance.detail }),
    };
  }

  /** The instance as known in memory or on disk (after a restart of the platform). */
  private async load(id: string): Promise<Instance> {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new Error(`not an instance id: ${id}`);
    let instance = this.instances.get(id);
    if (instance) return instance;
    const dir = join(this.options.root, id);
    const exists = await stat(dir).then(
      () => true,
      () => false,
    );
    const saved = exists
      ? await readFile(join(dir, "port"), "utf8").then(Number, () => undefined)
      : undefined;
    instance = this.instances.get(id) ?? {
      id,
      dir,
      port: saved !== undefined && Number.isInteger(saved) ? saved : undefined,
      child: undefined,
      state: exists ? "stopped" : "absent",
      stopping: false,
      log: [],
      logLoaded: false,
      output: undefined,
      lastTs: 0,
      queue: Promise.resolve(),
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
    this.checkVersion(spec);
    if (instance.state === "running" || instance.state === "starting") return;
    if (instance.state === "absent") throw new Error(`instance ${instance.id} was not created`);
    await this.loadLog(instance);
    const port = await this.assignPort(instance);
    instance.detail = undefined;
    instance.stopping = false;
    this.system(instance, `Starting Node-RED ${NODE_RED_VERSION} on ${this.host}:${port}`);

    const child = spawn(
      process.execPath,
      [
        this.redJs,
        "--settings",
        this.settingsFile,
        "--userDir",
        join(instance.dir, "userDir"),
        "--port",
        String(port),
      ],
      {
        cwd: instance.dir,
        env: {
          // Never the platform's own environment (its secrets): only what it chose to pass on.
          ...this.options.baseEnv,
          HOME: instance.dir,
          ...spec.env,
          NODE_ENV: "production",
          FLOWPLANE_NODE_RED_HOST: this.host,
          FLOWPLANE_NODE_RED_PORT: String(port),
          ...(spec.platformUrl && {
            FLOWPLANE_PLATFORM_URL: spec.platformUrl,
            FLOWPLANE_INSTANCE_ID: spec.id,
            FLOWPLANE_INSTANCE_TOKEN: spec.token,
          }),
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    instance.child = child;
    this.setState(instance, "starting");
    this.capture(instance, child.stdout!, "info");
    this.capture(instance, child.stderr!, "error");
    const exited = once(child, "exit").then(([code, signal]) => {
      this.exited(instance, child, code as number | null, signal as NodeJS.Signals | null);
    });
    child.once("error", (error) => this.system(instance, `Could not start: ${error.message}`));

    const ready = await Promise.race([
      this.waitForAnswer(port, this.startTimeoutMs).then((answered) =>
        answered ? "ready" : "timeout",
      ),
      exited.then(() => "exited" as const),
    ]);
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
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), this.stopGraceMs);
    await exited;
    clearTimeout(timer);
  }

  private exited(
    instance: Instance,
    child: ChildProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): void {
    if (instance.child !== child) return;
    instance.child = undefined;
    const how = signal ? `killed by ${signal}` : `exit code ${code}`;
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

  /** Whether anything answers HTTP on the port before the time is up. */
  private async waitForAnswer(port: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try {
        await fetch(`http://${this.host}:${port}/`, { signal: AbortSignal.timeout(2_000) });
        return true;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    return false;
  }

  private async assignPort(instance: Instance): Promise<number> {
    // A running Node-RED holds its port: it is its own, not taken.
    if (instance.port !== undefined && instance.child) return instance.port;
    const port = await this.choosePort(instance);
    if (port !== instance.port) {
      instance.port = port;
      await writeFile(join(instance.dir, "port"), `${port}\n`);
    }
    return port;
  }

  /** The instance's own port when it is still free, else the first free one in the range. */
  private async choosePort(instance: Instance): Promise<number> {
    const taken = new Set(
      [...this.instances.values()]
        .filter((other) => other !== instance && other.port !== undefined)
        .map((other) => other.port!),
    );
    const { min, max } = this.options.ports;
    const candidates = [
      ...(instance.port !== undefined && instance.port >= min && instance.port <= max
        ? [instance.port]
        : []),
      ...Array.from({ length: max - min + 1 }, (_, i) => min + i),
    ];
    for (const port of candidates) {
      if (!taken.has(port) && (await this.isFree(port))) return port;
    }
    throw new Error(`no free port in ${min}-${max} for another instance`);
  }

  private isFree(port: number): Promise<boolean> {
    return new Promise((resolve) => {
      const probe = createServer();
      probe.once("error", () => resolve(false));
      probe.listen(port, this.host, () => probe.close(() => resolve(true)));
    });
  }

  private capture(instance: Instance, stream: NodeJS.ReadableStream, fallback: LogEntry["level"]) {
    createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
      const match = NODE_RED_LINE.exec(line);
      const level = match && LEVELS.has(match[1] as LogEntry["level"]) ? match[1] : undefined;
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
      instance.output = createWriteStream(join(instance.dir, "output.jsonl"), { flags: "a" });
      // The log in memory still has it; a full disk must not take the platform down.
      instance.output.on("error", () => {});
    }
    instance.output.write(`${JSON.stringify(entry)}\n`);
  }

  /** The last `logLimit` entries of output.jsonl, once, before anything is added. */
  private async loadLog(instance: Instance): Promise<void> {
    if (instance.logLoaded) return;
    instance.logLoaded = true;
    const text = await readFile(join(instance.dir, "output.jsonl"), "utf8").catch(() => "");
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

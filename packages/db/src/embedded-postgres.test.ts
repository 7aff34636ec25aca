// The PostgreSQL server the platform starts for itself: a cluster in its directory, reached only
// through its socket, stopped with the platform — also when the platform is killed — and a server
// left running by an earlier start stopped before a new one starts.
import { spawn } from "node:child_process";
import { access, appendFile, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startEmbeddedPostgres } from "./embedded-postgres";
import { embeddedPostgresUnavailable } from "./embedded-postgres-programs";
import { superviseEmbeddedPostgres } from "./embedded-postgres-supervisor";
import { testInCI } from "./testing/env";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "flowplane-embedded-pg-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function query(url: string, text: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves when the process is gone (what the test waits for, bounded by the test's timeout). */
async function gone(pid: number): Promise<void> {
  while (alive(pid)) await new Promise((resolve) => setTimeout(resolve, 25));
}

/** A cluster made once for the tests that restart it (initdb is the slow part of a start). */
const STARTS = 120_000;

/**
 * Outside CI (which installs bubblewrap), a machine where the server cannot run — root without
 * bubblewrap — skips these tests, as `pnpm start` there falls back to PGlite; in CI they must run.
 */
const skip = !testInCI && embeddedPostgresUnavailable() !== undefined;

describe("the embedded PostgreSQL server", { timeout: STARTS, skip }, () => {
  test("makes its cluster, answers through its socket only, with the small settings, and stops", async () => {
    const dir = join(root, "data", "postgres");
    const server = await startEmbeddedPostgres({ dir, maxConnections: 12, durable: false });
    try {
      expect(server.timings.initdbMs).toBeGreaterThan(0);
      const [row] = await query(
        server.url,
        `select current_setting('listen_addresses') as tcp,
                current_setting('shared_buffers') as buffers,
                current_setting('max_connections') as connections,
                current_setting('autovacuum') as autovacuum,
                current_setting('server_encoding') as encoding,
                upper('straße é') as upper`,
      );
      expect(row).toEqual({
        tcp: "",
        buffers: "16MB",
        connections: "12",
        autovacuum: "on",
        encoding: "UTF8",
        upper: "STRAßE É",
      });
      // The cluster and its socket are the platform's user's alone.
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
      expect((await stat(dir)).uid).toBe(process.getuid!());
      expect(server.socketDir).toBe(dir);
      // Nothing half-made is left beside it.
      expect(
        (await import("node:fs/promises").then((fs) => fs.readdir(join(root, "data")))).sort(),
      ).toEqual(["postgres"]);
    } finally {
      await server.stop();
    }
    expect(alive(server.pid)).toBe(false);
    await expect(readFile(join(dir, "postmaster.pid"))).rejects.toThrow();

    // Started again: the same cluster, no initdb, the data kept.
    const again = await startEmbeddedPostgres({ dir, maxConnections: 12, durable: false });
    try {
      expect(again.timings.initdbMs).toBe(0);
      await query(again.url, "create table kept (n int); insert into kept values (7)");
    } finally {
      await again.stop();
    }
    const third = await startEmbeddedPostgres({ dir, maxConnections: 12, durable: false });
    try {
      expect(await query(third.url, "select n from kept")).toEqual([{ n: 7 }]);
    } finally {
      await third.stop();
    }
  });

  test("a server left running by an earlier start is stopped before a new one starts", async () => {
    const dir = join(root, "leftover", "postgres");
    const first = await startEmbeddedPostgres({ dir, maxConnections: 12, durable: false });
    await query(first.url, "create table kept (n int); insert into kept values (1)");
    // The next start finds the first one's postmaster.pid, its process alive.
    const second = await startEmbeddedPostgres({ dir, maxConnections: 12, durable: false });
    try {
      expect(alive(first.pid)).toBe(false);
      expect(second.pid).not.toBe(first.pid);
      expect(await query(second.url, "select n from kept")).toEqual([{ n: 1 }]);
    } finally {
      await second.stop();
      await first.stop();
    }
  });

  test("a platform killed with SIGKILL leaves no server behind", async () => {
    const dir = join(root, "killed", "postgres");
    // A process that starts the server and says its pid, then waits to be killed.
    const script = `
      import { startEmbeddedPostgres } from ${JSON.stringify(join(import.meta.dirname, "embedded-postgres.ts"))};
      const server = await startEmbeddedPostgres({ dir: ${JSON.stringify(dir)}, maxConnections: 12, durable: false });
      console.log("pid " + server.pid);
      setInterval(() => {}, 1000);
    `;
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const pid = await new Promise<number>((resolve, reject) => {
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk;
        const match = /pid (\d+)/.exec(output);
        if (match) resolve(Number(match[1]));
      });
      child.on("exit", (code) => reject(new Error(`exited ${code}: ${output}`)));
    });
    expect(alive(pid)).toBe(true);
    child.kill("SIGKILL");
    await gone(pid);
    // Stopped, not killed: a clean shutdown removes its pid file.
    await expect(readFile(join(dir, "postmaster.pid"))).rejects.toThrow();
  });

  test("supervised with a long DATA_DIR (its socket in a temporary directory): a failed restart keeps the socket directory, the next one succeeds, an early death waits", async () => {
    // Too long for a socket path: the socket goes to a private temporary directory.
    const dir = join(root, "d".repeat(100), "postgres");
    const lines: string[] = [];
    const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
    /** The first line logged from line `from` on that matches, when it is logged. */
    const logged = (pattern: RegExp, from = 0) =>
      new Promise<string>((resolve) => {
        const line = lines.slice(from).find((l) => pattern.test(l));
        if (line) resolve(line);
        else waiters.push({ pattern, resolve });
      });
    const log = (_level: string, message: string) => {
      lines.push(message);
      for (const waiter of waiters.filter((w) => w.pattern.test(message))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    };
    const supervised = await superviseEmbeddedPostgres({
      dir,
      maxConnections: 12,
      durable: false,
      log,
    });
    const socketDir = decodeURIComponent(new URL(supervised.url).searchParams.get("host")!);
    try {
      expect(socketDir.startsWith(dir)).toBe(false);
      // The next start fails: its configuration file has an error.
      const autoConf = join(dir, "postgresql.auto.conf");
      const conf = await readFile(autoConf, "utf8");
      await appendFile(autoConf, "\nflowplane_no_such_setting = 1\n");
      const firstPid = supervised.pid()!;
      process.kill(firstPid, "SIGKILL");
      await logged(/did not start again/);
      // The failed attempt left the shared socket directory; the next attempt succeeds.
      await access(socketDir);
      await writeFile(autoConf, conf);
      await logged(/started again/);
      expect(await query(supervised.url, "select 1 as one")).toEqual([{ one: 1 }]);

      // The restarted server dies at once: started again after the carried backoff, not at once.
      const from = lines.length;
      process.kill(supervised.pid()!, "SIGKILL");
      const exitLine = await logged(/exited unexpectedly .*starting it again in \d+ ms/, from);
      expect(Number(/in (\d+) ms/.exec(exitLine)![1])).toBeGreaterThanOrEqual(250);
      await logged(/started again \(pid/, from);
      expect(await query(supervised.url, "select 1 as one")).toEqual([{ one: 1 }]);
    } finally {
      await supervised.stop();
    }
    // The supervisor removes the socket directory when it stops.
    await expect(access(socketDir)).rejects.toThrow();
  });
});

// The real entry point in a child process: first start, the initial token file, restarts, SIGTERM
// and configuration errors; the default database (the platform's own PostgreSQL, a DATA_DIR's
// PGlite kept, PGlite where the server cannot run); one platform per DATA_DIR, a port in use,
// DATA_DIR's permissions; and hosted instances where no sandbox can be had.
//
// Without TEST_DATABASE_URL every platform here starts on the default, as `pnpm start` does: its
// own PostgreSQL server in its DATA_DIR (whatever TEST_DATABASE says for the other test files) —
// or, outside CI on a machine where that server cannot run (root without bubblewrap), on what the
// default then is, PGlite.
import { createDb, type Db, embeddedPostgresUnavailable, migrateToLatest } from "@flowplane/db";
import {
  createTestDb,
  migratedTemplate,
  type TestDb,
  testDatabaseUrl,
} from "@flowplane/db/testing";
import { type ChildProcess, spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import {
  access,
  chmod,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { inCI, inheritedEnv } from "../support/env";

const root = join(import.meta.dirname, "../..");

/**
 * Whether the platforms here run the default's own PostgreSQL server: without TEST_DATABASE_URL,
 * where it can run (as root it needs bubblewrap, which CI installs: there it must).
 */
const ownServer = !testDatabaseUrl && (inCI || embeddedPostgresUnavailable() === undefined);

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  /** Resolves once the output matches (what the platform says when it has done something). */
  says: (pattern: RegExp) => Promise<void>;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: { ...inheritedEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const waiting: { pattern: RegExp; resolve: () => void }[] = [];
  const says = (pattern: RegExp) =>
    new Promise<void>((resolve) => {
      if (pattern.test(output)) resolve();
      else waiting.push({ pattern, resolve });
    });
  // Waits for the event that decides: the server says where it listens, or the process exits.
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      for (const waiter of waiting.filter((w) => w.pattern.test(output))) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
      const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) resolve({ child, url: match[1]!, output: () => output, says, exited });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    void exited.then((code) => reject(new Error(`exited ${code}:\n${output}`)));
  });
}

/** Runs the entry point to its end (a refused start): its exit code and what it printed. */
function run(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: { ...inheritedEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, output })));
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Every path under `dir` with its mode, size and modification time — but of the running platform's
 * own PostgreSQL cluster only its postmaster.pid (the server writes its files as it works).
 */
async function snapshot(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { recursive: true })) {
    if (entry.startsWith("postgres/") && entry !== "postgres/postmaster.pid") continue;
    const info = await stat(join(dir, entry)).catch(() => undefined);
    if (info) found.push(`${entry} ${info.mode.toString(8)} ${info.size} ${info.mtimeMs}`);
  }
  return found.sort();
}

/**
 * The server's database for a test of its own: a new schema on your PostgreSQL, else the default
 * (the platform's own server, from the DATA_DIR's copy of the template cluster). `pglite`: for
 * tests whose platform cannot start its own server (as root without `bwrap`: PATH emptied),
 * DATABASE=pglite, from the DATA_DIR's copy of the PGlite template (`newDataDir(…, "pglite")`).
 */
async function ownDatabase(
  options: { pglite?: boolean } = {},
): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  if (!testDatabaseUrl) {
    return { env: options.pglite ? { DATABASE: "pglite" } : {}, drop: async () => {} };
  }
  const created = await createTestDb({ migrate: false });
  const url = new URL(testDatabaseUrl);
  url.searchParams.set(
    "options",
    `-c search_path=${(created.config as { schema: string }).schema}`,
  );
  return { env: { DATABASE_URL: url.toString() }, drop: () => created.drop() };
}

/**
 * These tests start whole platform processes, one to three each (a start: loading the sources,
 * opening the database, the first administrator's password hash), and wait for what each says;
 * their bound is that of instances.test.ts's tests that start Node-RED, not the default's.
 */
const PROCESS_STARTS = 120_000;

let dataDir: string;
let database: TestDb | undefined;
let env: Record<string, string>;
/**
 * The platform's own databases made once (migrated, no users), as DATA_DIR keeps them: a
 * PostgreSQL cluster in `postgres/` and a PGlite database in `pglite/`. Each new DATA_DIR starts
 * from a copy of one.
 */
let template: string | undefined;

/**
 * A new DATA_DIR. Without TEST_DATABASE_URL it starts with a copy of the template's database, the
 * default's cluster or (`pglite`, and the default where no server can run) PGlite's, which the
 * platform then keeps, so that each start does not make one of its own
 * (initdb: the longest part of a first start, seconds for PostgreSQL and ~20 s for PGlite on a
 * loaded machine; the first start of each is tested once below); what makes a first start one —
 * no users, no files — is unchanged.
 */
async function newDataDir(
  prefix: string,
  database: "postgres" | "pglite" = ownServer ? "postgres" : "pglite",
) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  if (template) await cp(join(template, database), join(dir, database), { recursive: true });
  return dir;
}

beforeAll(async () => {
  // The entry point's first run compiles every source file (tsx keeps them for the next runs): paid
  // here, in a run refused by its configuration before it touches anything, so that no test's
  // own time holds the cold compile of a loaded machine.
  const warm = await run({ PORT: "not-a-port" });
  expect(warm.output).toContain("PORT");
  if (!testDatabaseUrl) {
    template = await mkdtemp(join(tmpdir(), "flowplane-main-template-"));
    if (ownServer) {
      const cluster = await createDb({
        kind: "embedded-postgres",
        dir: join(template, "postgres"),
        env: inheritedEnv,
      });
      await migrateToLatest(cluster);
      await cluster.destroy();
    }
    // PGlite's, in files, from the migrated dump the other test files load (made once a machine).
    const pglite = await createDb({
      kind: "pglite",
      dataDir: join(template, "pglite"),
      loadDataDir: await migratedTemplate(),
    });
    expect(await migrateToLatest(pglite)).toEqual([]);
    await pglite.destroy();
    // As the platform keeps it: its user's alone.
    for (const entry of await readdir(template, { recursive: true })) {
      const path = join(template, entry);
      await chmod(path, (await stat(path)).isDirectory() ? 0o700 : 0o600);
    }
  }
  dataDir = await newDataDir("flowplane-main-");
  env = { DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", MQTT_PORT: "0" };
  if (testDatabaseUrl) {
    // A schema of its own in the test server, named through the connection's search_path.
    database = await createTestDb({ migrate: false });
    const schema = (database.config as { schema: string }).schema;
    const url = new URL(testDatabaseUrl);
    url.searchParams.set("options", `-c search_path=${schema}`);
    env.DATABASE_URL = url.toString();
  }
  // Three process starts' bounds: the cold compile of the entry point, a PostgreSQL cluster made
  // and migrated, and PGlite's template, on a machine a clean-clone CI run saturates (120 s, the
  // hooks' default, was overrun there once).
}, 3 * PROCESS_STARTS);
afterAll(async () => {
  await database?.drop();
  // Made last in the setup: none when the setup did not end.
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  if (template) await rm(template, { recursive: true, force: true });
});

describe("the server process", { timeout: PROCESS_STARTS }, () => {
  test("first start creates admin with a 0600 token file and an expired first password; logs the paths, never the values", async () => {
    const server = await start(env);
    try {
      const file = join(dataDir, "initial-admin-token");
      const info = await stat(file);
      expect(info.mode & 0o777).toBe(0o600);
      const token = (await readFile(file, "utf8")).trim();
      expect(token).toMatch(/^fpp_[0-9A-Za-z]{36}$/);

      const me = await fetch(`${server.url}/api/v1/user`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ username: "admin", admin: true });
      const teams = await fetch(`${server.url}/api/v1/teams`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(teams.status).toBe(200);

      expect(server.output()).toContain(file);
      expect(server.output()).not.toContain(token);

      // The first password: a 0600 file, named in the log, never its value; marked expired.
      const passwordFile = join(dataDir, "initial-admin-password");
      expect((await stat(passwordFile)).mode & 0o777).toBe(0o600);
      const password = (await readFile(passwordFile, "utf8")).trim();
      expect(password.length).toBeGreaterThanOrEqual(16);
      expect(server.output()).toContain(passwordFile);
      expect(server.output()).not.toContain(password);
      // Where to sign in, as whom, with which password.
      expect(server.output()).toContain(
        `Sign in at ${server.url}/sign-in as admin, with the first password in ${passwordFile}`,
      );
      // Where it listens (PORT=0: a port of its own choosing), for scripts and the guide.
      expect(await readFile(join(dataDir, "base-url"), "utf8")).toBe(`${server.url}\n`);
      const login = await fetch(`${server.url}/account/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password }),
      });
      expect(login.status).toBe(200);
      expect(await login.json()).toEqual({ status: "okay", password_expired: true });
    } finally {
      server.child.kill("SIGTERM");
    }
    expect(await server.exited).toBe(0);
  });

  test("a later start neither recreates the admin nor touches the token file; the token still works", async () => {
    const file = join(dataDir, "initial-admin-token");
    const before = await stat(file);
    const token = (await readFile(file, "utf8")).trim();
    const server = await start(env);
    try {
      expect((await stat(file)).mtimeMs).toBe(before.mtimeMs);
      expect((await readFile(file, "utf8")).trim()).toBe(token);
      const me = await fetch(`${server.url}/api/v1/user`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(me.status).toBe(200);
      expect(server.output()).not.toContain("created the administrator");

      // What people do is a line each at info: here a team created with the token.
      const created = await fetch(`${server.url}/api/v1/teams`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Logged team" }),
      });
      expect(created.status).toBe(200);
      const team = (await created.json()) as { id: string };
      await server.says(/"msg":"team\.created"/);
      const line = JSON.parse(
        server
          .output()
          .split("\n")
          .find((l) => l.includes('"msg":"team.created"'))!,
      );
      expect(line).toMatchObject({ level: 30, component: "activity", teamId: team.id });
      expect(line.by).toMatch(/^user:/);
      expect(server.output()).not.toContain(token);
    } finally {
      server.child.kill("SIGTERM");
    }
    expect(await server.exited).toBe(0);
  });

  test("SIGTERM lets a request in flight finish, then exits 0", async () => {
    const token = (await readFile(join(dataDir, "initial-admin-token"), "utf8")).trim();
    const server = await start(env);
    const body = JSON.stringify({ name: "In Flight" });
    // Headers and half the body go out before the signal, the rest after it.
    const reply = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = httpRequest(
        `${server.url}/api/v1/teams`,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          },
        },
        (response) => {
          let text = "";
          response.on("data", (chunk: Buffer) => (text += chunk));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
        },
      );
      request.on("error", reject);
      request.write(body.slice(0, 10));
      setTimeout(() => {
        server.child.kill("SIGTERM");
        setTimeout(() => request.end(body.slice(10)), 300);
      }, 300);
    });
    const { status, text } = await reply;
    expect(status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ name: "In Flight" });
    expect(await server.exited).toBe(0);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  test.skipIf(!testDatabaseUrl)(
    "with WORKERS=2 two processes serve one port, and SIGTERM stops them all with exit 0",
    async () => {
      const token = (await readFile(join(dataDir, "initial-admin-token"), "utf8")).trim();
      const server = await start({
        ...env,
        WORKERS: "2",
        BROKER_MODE: "off",
        INSTANCE_DRIVER: "off",
      });
      // Each worker says where it listens: the second line is the event, however long it takes.
      await server.says(/listening at[\s\S]*listening at/);
      expect(server.output().match(/listening at/g)?.length).toBe(2);
      for (let i = 0; i < 10; i++) {
        const reply = await fetch(`${server.url}/api/v1/user`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(reply.status).toBe(200);
      }
      server.child.kill("SIGTERM");
      expect(await server.exited).toBe(0);
    },
  );

  test("at a terminal the log is lines a person reads, not JSON, and says where to sign in", async () => {
    const own = await newDataDir("flowplane-tty-");
    const { env: db, drop } = await ownDatabase();
    // `script` runs the platform with a terminal of its own, as a person starting it has.
    const child = spawn(
      "script",
      ["-qfec", `'${process.execPath}' --import tsx src/main.ts`, "/dev/null"],
      {
        cwd: root,
        env: { ...inheritedEnv, ...env, ...db, DATA_DIR: own, BROKER_MODE: "off" },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let output = "";
    const exited = new Promise((resolve) => child.on("exit", resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk;
          // The whole line: under load, output can arrive cut anywhere.
          if (
            /Sign in at .* as admin, with the first password in \S*initial-admin-password/.test(
              output,
            )
          ) {
            resolve();
          }
        });
        void exited.then(() => reject(new Error(`exited:\n${output}`)));
      });
      const colour = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
      const plain = output.replace(colour, "");
      expect(plain).toMatch(/\d\d:\d\d:\d\d\] INFO: Server listening at http:\/\/127\.0\.0\.1:\d+/);
      expect(plain).toContain(
        `/sign-in as admin, with the first password in ${own}/initial-admin-password`,
      );
      expect(output).not.toContain('{"level"');
      expect(output).toMatch(colour);
    } finally {
      // The platform itself (script's child), found by its DATA_DIR: it ends, then script.
      const platforms: number[] = [];
      for (const name of await readdir("/proc")) {
        if (!/^\d+$/.test(name)) continue;
        const environ = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "");
        const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
        if (environ.split("\0").includes(`DATA_DIR=${own}`) && cmdline.includes("src/main.ts")) {
          if (!cmdline.startsWith("script")) {
            process.kill(Number(name), "SIGTERM");
            platforms.push(Number(name));
          }
        }
      }
      child.stdin.end();
      await exited;
      // script can end before the platform has stopped its PostgreSQL (still writing in DATA_DIR):
      // DATA_DIR goes once the platform process has gone.
      for (const pid of platforms) {
        while (
          await access(`/proc/${pid}`).then(
            () => true,
            () => false,
          )
        ) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      // And its PostgreSQL's processes (their command lines name the directory), which can
      // outlive it by a moment while they flush their WAL.
      for (const name of await readdir("/proc")) {
        if (!/^\d+$/.test(name)) continue;
        const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
        if (!cmdline.includes(own)) continue;
        while (
          await access(`/proc/${name}`).then(
            () => true,
            () => false,
          )
        ) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      await drop();
      await rm(own, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    }
  });

  test("a configuration error stops the start with a clear message (exit 1)", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: root,
      env: {
        ...inheritedEnv,
        DATA_DIR: dataDir,
        PORT: "not-a-port",
        DATABASE_URL: "mysql://x",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("Invalid configuration");
    expect(stderr).toContain("PORT");
    expect(stderr).toContain("DATABASE_URL");
  });

  test("DATABASE (the platform's own database) and DATABASE_URL (a server of yours) together are refused", async () => {
    const refused = await run({
      ...env,
      DATABASE: "pglite",
      DATABASE_URL: "postgres://postgres@127.0.0.1:5432/postgres",
    });
    expect(refused.code).toBe(1);
    expect(refused.output).toContain("DATABASE: chooses the platform's own database");
    expect(refused.output).not.toContain("listening at");
  });

  test.skipIf(!ownServer)(
    "the default database: a PostgreSQL server of the platform's, made at the first start in DATA_DIR/postgres, stopped with the platform",
    async () => {
      // No template: this start runs initdb, as a new user's first `pnpm start` does.
      const own = await mkdtemp(join(tmpdir(), "flowplane-embedded-"));
      try {
        const server = await start({
          ...env,
          DATA_DIR: own,
          BROKER_MODE: "off",
          INSTANCE_DRIVER: "off",
        });
        const pid = Number(
          (await readFile(join(own, "postgres", "postmaster.pid"), "utf8")).split("\n")[0],
        );
        try {
          expect(server.output()).toMatch(/initialised a PostgreSQL cluster in/);
          expect(server.output()).toMatch(/PostgreSQL 18 ready/);
          expect(server.output()).toMatch(/"database":"embedded-postgres","migrations":\["/);
          expect((await stat(join(own, "postgres"))).mode & 0o777).toBe(0o700);
          expect(await readdir(own)).not.toContain("pglite");
          const token = (await readFile(join(own, "initial-admin-token"), "utf8")).trim();
          const team = await fetch(`${server.url}/api/v1/teams`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ name: "On PostgreSQL" }),
          });
          expect(team.status).toBe(200);
          expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
          expect(processAlive(pid)).toBe(true);
        } finally {
          server.child.kill("SIGTERM");
        }
        expect(await server.exited).toBe(0);
        // Stopped before the platform exited: its pid file is gone with it.
        expect(processAlive(pid)).toBe(false);
        await expect(stat(join(own, "postgres", "postmaster.pid"))).rejects.toThrow();
        expect(server.output()).not.toMatch(/"level":(40|50)/);
      } finally {
        await rm(own, { recursive: true, force: true });
      }
    },
  );

  test.skipIf(!!testDatabaseUrl)(
    "a DATA_DIR that holds a PGlite database (an earlier version's default) keeps it, and says so",
    async () => {
      const own = await newDataDir("flowplane-pglite-", "pglite");
      try {
        const server = await start({
          ...env,
          DATA_DIR: own,
          BROKER_MODE: "off",
          INSTANCE_DRIVER: "off",
        });
        try {
          expect(server.output()).toContain("DATA_DIR holds a PGlite database");
          // The database it found (already migrated), not a new one.
          expect(server.output()).toMatch(/"database":"pglite","migrations":\[\]/);
          expect(server.output()).not.toMatch(/PostgreSQL 18 ready/);
          expect(await readdir(own)).not.toContain("postgres");
          const token = (await readFile(join(own, "initial-admin-token"), "utf8")).trim();
          const me = await fetch(`${server.url}/api/v1/user`, {
            headers: { authorization: `Bearer ${token}` },
          });
          expect(me.status).toBe(200);
        } finally {
          server.child.kill("SIGTERM");
        }
        expect(await server.exited).toBe(0);
      } finally {
        await rm(own, { recursive: true, force: true });
      }
    },
  );

  test("a database a newer version migrated stops the start before it serves, naming both newest migrations (exit 1)", async () => {
    // What a newer version leaves: a migration row this version does not know.
    const future = "2099-01-01T0000-from-the-future";
    const markNewer = (db: Db) =>
      db
        .insertInto("kysely_migration" as never)
        .values({ name: future, timestamp: "2099-01-01T00:00:00.000Z" } as never)
        .execute();
    const own = await newDataDir("flowplane-newer-", "pglite");
    let created: TestDb | undefined;
    try {
      const where: Record<string, string> = {};
      if (testDatabaseUrl) {
        created = await createTestDb();
        await markNewer(created.db);
        const url = new URL(testDatabaseUrl);
        url.searchParams.set(
          "options",
          `-c search_path=${(created.config as { schema: string }).schema}`,
        );
        where.DATABASE_URL = url.toString();
      } else {
        const pglite = await createDb({ kind: "pglite", dataDir: join(own, "pglite") });
        await markNewer(pglite);
        await pglite.destroy();
        where.DATABASE = "pglite";
      }
      const refused = await run({ ...env, ...where, DATA_DIR: own, BROKER_MODE: "off" });
      expect(refused.code).toBe(1);
      expect(refused.output).toMatch(
        /Flowplane did not start: the database was migrated by a newer version of Flowplane: its newest migration is 2099-01-01T0000-from-the-future, this version's newest is 20\d\d-\d\d-\d\dT\d{4}-[a-z-]+\. Run the newer version, or restore the backup taken before the upgrade \(pnpm restore FILE\)/,
      );
      expect(refused.output).not.toContain("listening at");
      expect(refused.output).not.toContain("corrupted migrations");
    } finally {
      await created?.drop();
      await rm(own, { recursive: true, force: true });
    }
  });

  test.skipIf(!!testDatabaseUrl || process.getuid?.() !== 0)(
    "as root without bubblewrap (PATH emptied) the default is PGlite, with a warning saying why",
    // PGlite's initdb in WebAssembly at this first start: ~20 s on a quiet 2-core machine, 110 s
    // on a saturated one.
    { timeout: 3 * PROCESS_STARTS },
    async () => {
      const own = await mkdtemp(join(tmpdir(), "flowplane-fallback-"));
      try {
        const server = await start({
          ...env,
          DATA_DIR: own,
          BROKER_MODE: "off",
          INSTANCE_DRIVER: "off",
          PATH: "/nonexistent",
        });
        try {
          expect(server.output()).toMatch(
            /"level":40,.*the embedded PostgreSQL cannot run here \(PostgreSQL does not run as root, .*bubblewrap.*\): using PGlite/,
          );
          expect(server.output()).toMatch(/"database":"pglite","migrations":\["/);
          expect(await readdir(own)).toContain("pglite");
          expect(await readdir(own)).not.toContain("postgres");
          expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
        } finally {
          server.child.kill("SIGTERM");
        }
        expect(await server.exited).toBe(0);
      } finally {
        await rm(own, { recursive: true, force: true });
      }
    },
  );
});

describe("one DATA_DIR, one platform", { timeout: PROCESS_STARTS }, () => {
  test("a second process on the same DATA_DIR exits before touching anything, naming the directory and the process holding it", async () => {
    // The first one quiet (no broker, no instances), so that only the second could change a file.
    const first = await start({ ...env, BROKER_MODE: "off", INSTANCE_DRIVER: "off" });
    try {
      const token = (await readFile(join(dataDir, "initial-admin-token"), "utf8")).trim();
      const team = await fetch(`${first.url}/api/v1/teams`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Kept" }),
      });
      expect(team.status).toBe(200);
      const before = await snapshot(dataDir);

      const second = await run(env);
      expect(second.code).toBe(1);
      expect(second.output).toContain(`DATA_DIR ${dataDir} is in use by another Flowplane`);
      expect(second.output).toContain(`process ${first.child.pid}`);
      expect(second.output).not.toContain("listening at");
      expect(await snapshot(dataDir)).toEqual(before);

      // The first one never noticed.
      const teams = await fetch(`${first.url}/api/v1/teams`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(JSON.stringify(await teams.json())).toContain('"Kept"');
    } finally {
      first.child.kill("SIGTERM");
    }
    expect(await first.exited).toBe(0);
    // A clean stop gives the directory back.
    await expect(stat(join(dataDir, "platform.lock"))).rejects.toThrow();
  });

  test("a lock left by a process killed with kill -9 does not block the next start", async () => {
    const killed = await start(env);
    killed.child.kill("SIGKILL");
    await killed.exited;
    const lock = JSON.parse(await readFile(join(dataDir, "platform.lock"), "utf8")) as {
      pid: number;
    };
    expect(lock.pid).toBe(killed.child.pid);

    const next = await start(env);
    try {
      const token = (await readFile(join(dataDir, "initial-admin-token"), "utf8")).trim();
      const me = await fetch(`${next.url}/api/v1/user`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(me.status).toBe(200);
      const now = JSON.parse(await readFile(join(dataDir, "platform.lock"), "utf8")) as {
        pid: number;
      };
      expect(now.pid).toBe(next.child.pid);
    } finally {
      next.child.kill("SIGTERM");
    }
    expect(await next.exited).toBe(0);
  });

  test("a port in use is found before DATA_DIR is created, and the message says how to choose another", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const { port } = holder.address() as { port: number };
    const fresh = join(await mkdtemp(join(tmpdir(), "flowplane-port-")), "data");
    try {
      const refused = await run({ ...env, DATA_DIR: fresh, PORT: String(port) });
      expect(refused.code).toBe(1);
      expect(refused.output).toContain(`Port ${port} on 127.0.0.1 is already in use`);
      expect(refused.output).toContain(`PORT=${port + 1}`);
      await expect(stat(fresh)).rejects.toThrow();
    } finally {
      await new Promise((resolve) => holder.close(resolve));
      await rm(join(fresh, ".."), { recursive: true, force: true });
    }
  });
});

describe("DATA_DIR", { timeout: PROCESS_STARTS }, () => {
  test("holds nothing another user of the machine can read: directories 0700 (0710 for instances' group), files 0600", async () => {
    for (const entry of await readdir(dataDir, { recursive: true })) {
      const info = await stat(join(dataDir, entry));
      expect(info.mode & (info.isDirectory() ? 0o067 : 0o077), entry).toBe(0);
    }
    expect((await stat(dataDir)).mode & 0o067).toBe(0);
  });

  test("made open by an earlier version (0755, 0644), is made private at start", async () => {
    const old = await newDataDir("flowplane-open-");
    await chmod(old, 0o755);
    await mkdir(join(old, "pglite"), { recursive: true });
    await chmod(join(old, "pglite"), 0o755);
    await writeFile(join(old, "pglite", "table"), "rows", { mode: 0o644 });
    await chmod(join(old, "pglite", "table"), 0o644);
    const { env: db, drop } = await ownDatabase();
    const server = await start({
      ...env,
      ...db,
      DATA_DIR: old,
      BROKER_MODE: "off",
      INSTANCE_DRIVER: "off",
    });
    try {
      expect(server.output()).toContain("DATA_DIR was open to other users");
      expect((await stat(old)).mode & 0o777).toBe(0o700);
      expect((await stat(join(old, "pglite"))).mode & 0o777).toBe(0o700);
      expect((await stat(join(old, "pglite", "table"))).mode & 0o777).toBe(0o600);
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
      await drop();
      await rm(old, { recursive: true, force: true });
    }
  });
});

describe("hosted instances where no sandbox can be had", { timeout: 120_000 }, () => {
  /** A team, an application and an instance, made with the administrator's token. */
  async function createInstance(url: string, token: string) {
    const call = async (method: string, path: string, body?: unknown) => {
      const reply = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined && { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: reply.status, body: (await reply.json()) as any };
    };
    const team = await call("POST", "/api/v1/teams", { name: "Alone" });
    const app = await call("POST", "/api/v1/applications", { name: "Mine", teamId: team.body.id });
    const made = await call("POST", "/api/v1/projects", {
      name: "on-my-machine",
      applicationId: app.body.id,
    });
    expect(made.status).toBe(200);
    const id = made.body.id as string;
    const settled = async () => {
      for (;;) {
        const { body } = await call("GET", `/api/v1/projects/${id}/status`);
        if (body.meta.state !== "starting") return body.meta.state as string;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const logs = async () =>
      (await call("GET", `/api/v1/projects/${id}/logs?limit=1000`)).body.log as {
        level: string;
        msg: string;
      }[];
    return { id, call, settled, logs };
  }

  test(
    "the platform starts, says in its log and to administrators that instances are not isolated, and an instance starts without an error (relative DATA_DIR)",
    {
      // Two platform starts on PGlite and a Node-RED start under each: past 120 s on a machine
      // saturated by other work (a clean-clone CI run at load 14), so the bound is that of three
      // process starts, as the PGlite test's above.
      timeout: 3 * PROCESS_STARTS,
    },
    async () => {
      const own = await newDataDir("flowplane-bare-", "pglite");
      const { env: db, drop } = await ownDatabase({ pglite: true });
      const server = await start({
        ...env,
        ...db,
        // Relative to the server's working directory, as the default `./.data`.
        DATA_DIR: relative(root, own),
        BROKER_MODE: "off",
        PATH: "/nonexistent",
      });
      try {
        // As root, an instance without a user id of its own would be root: it is refused instead.
        const asRoot = process.getuid?.() === 0;
        expect(server.output()).toMatch(
          asRoot
            ? /"level":50,.*the platform runs as root and hosted instances cannot have user ids of their own \(bwrap was not found/
            : /"level":40,.*hosted instances are NOT isolated \(bwrap was not found/,
        );
        const token = (await readFile(join(own, "initial-admin-token"), "utf8")).trim();
        const settings = await fetch(`${server.url}/api/v1/settings`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(((await settings.json()) as any)["platform:instances:isolation"]).toEqual({
          mode: "none",
          user: "platform",
          required: false,
          network: "host",
          reason: "bwrap was not found (Debian and Ubuntu: apt-get install bubblewrap)",
        });

        const instance = await createInstance(server.url, token);
        if (asRoot) {
          expect(await instance.settled()).toBe("crashed");
          expect((await instance.logs()).at(-1)).toMatchObject({
            level: "system",
            msg: expect.stringMatching(/^Not started: the platform runs as root/),
          });
          return;
        }
        expect(await instance.settled()).toBe("running");
        const log = await instance.logs();
        expect(log.some((e) => e.level === "info" && e.msg.startsWith("Server now running"))).toBe(
          true,
        );
        expect(log.find((e) => e.msg.startsWith("Not isolated"))?.level).toBe("system");
        expect(log.filter((e) => e.level === "error" || e.msg.includes("ENOENT"))).toEqual([]);
        // Node-RED's user directory is where it belongs, with the project's package.json.
        const userDir = join(own, "instances", instance.id, "userDir");
        expect((await stat(join(userDir, "package.json"))).mode & 0o777).toBe(0o600);
        expect((await stat(join(userDir, "node_modules"))).isDirectory()).toBe(true);

        // Started again, the platform says which instances it restarted.
        server.child.kill("SIGTERM");
        expect(await server.exited).toBe(0);
        const again = await start({
          ...env,
          ...db,
          DATA_DIR: relative(root, own),
          BROKER_MODE: "off",
          PATH: "/nonexistent",
        });
        try {
          await again.says(/restarted 1 of the 1 instances that were running: on-my-machine/);
        } finally {
          again.child.kill("SIGTERM");
          expect(await again.exited).toBe(0);
        }
      } finally {
        server.child.kill("SIGTERM");
        await server.exited;
        await drop();
        await rm(own, { recursive: true, force: true });
      }
    },
  );

  test("with INSTANCE_ISOLATION=required, an instance is refused its start, with why in its log and state, and the platform keeps serving", async () => {
    const own = await newDataDir("flowplane-strict-", "pglite");
    const { env: db, drop } = await ownDatabase({ pglite: true });
    const server = await start({
      ...env,
      ...db,
      DATA_DIR: own,
      BROKER_MODE: "off",
      PATH: "/nonexistent",
      INSTANCE_ISOLATION: "required",
    });
    try {
      expect(server.output()).toMatch(
        /"level":50,.*INSTANCE_ISOLATION=required and no sandbox can be made here/,
      );
      const token = (await readFile(join(own, "initial-admin-token"), "utf8")).trim();
      const instance = await createInstance(server.url, token);
      expect(await instance.settled()).toBe("crashed");
      expect((await instance.logs()).at(-1)).toMatchObject({
        level: "system",
        msg: expect.stringMatching(
          /^Not started: INSTANCE_ISOLATION=required and no sandbox can be made \(bwrap was not found/,
        ),
      });
      const again = await instance.call("POST", `/api/v1/projects/${instance.id}/actions/start`);
      expect(again.status).toBe(500);
      expect(again.body.error).toContain("INSTANCE_ISOLATION=required");
      const settings = await instance.call("GET", "/api/v1/settings");
      expect(settings.body["platform:instances:isolation"]).toMatchObject({
        mode: "none",
        required: true,
      });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      server.child.kill("SIGTERM");
      expect(await server.exited).toBe(0);
      await drop();
      await rm(own, { recursive: true, force: true });
    }
  });
});

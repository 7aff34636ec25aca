// `pnpm backup` and `pnpm restore` (src/operations/), as an operator runs them: a real platform
// (main.ts in a child process) with a team, an application, an instance, a library entry and a
// personal token, backed up while a load of writes runs, stopped, restored into a new DATA_DIR and
// started again — the same reads answer the same and the same token works. On the platform's own
// PostgreSQL (where it can run), and on the PostgreSQL pass (TEST_DATABASE_URL) with DATABASE_URL
// too; PGlite backed up stopped (and refused while its platform runs) without starting a platform.
// And what a restore refuses: a DATA_DIR not empty, an archive that is not a backup (corrupted,
// unknown, an entry leaving DATA_DIR, a newer schema).
import {
  createDb,
  embeddedPostgresUnavailable,
  knownMigrations,
  migrateToLatest,
} from "@flowplane/db";
import { createTestDb, migratedTemplate, testDatabaseUrl } from "@flowplane/db/testing";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { constants } from "node:fs";
import {
  chmod,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { pino } from "pino";
import * as tar from "tar";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { copyDataDir } from "../../src/operations/copy-files";
import { inCI, inheritedEnv } from "../support/env";

const root = join(import.meta.dirname, "../..");
const ownServer = inCI || embeddedPostgresUnavailable() === undefined;
const PROCESS_STARTS = 120_000;

let scratch: string;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "flowplane-backup-"));
  // The operations' entry point compiled once (tsx keeps it), outside any test's bound.
  const warm = await operation({}, "restore", join(scratch, "none.tar.gz"));
  expect(warm.code).toBe(1);
}, PROCESS_STARTS);
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** Runs `backup …` or `restore …` to its end: its exit code and what it printed. */
function operation(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/operations/main.ts", ...args], {
    cwd: root,
    env: { ...inheritedEnv, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, output })));
}

interface Platform {
  child: ChildProcess;
  url: string;
  stop: () => Promise<void>;
}

function start(env: Record<string, string>): Promise<Platform> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: {
      ...inheritedEnv,
      PORT: "0",
      HOST: "127.0.0.1",
      MQTT_PORT: "0",
      INSTANCE_DRIVER: "off",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  cleanups.push(stop);
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) resolve({ child, url: match[1]!, stop });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    void exited.then(() => reject(new Error(`exited:\n${output}`)));
  });
}

async function call(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const reply = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await reply.text();
  return { status: reply.status, body: text ? JSON.parse(text) : undefined };
}

/** What the test made, and the reads that must answer the same after a restore. */
async function populate(base: string, adminToken: string) {
  const ok = async (method: string, path: string, body?: unknown) => {
    const reply = await call(base, adminToken, method, path, body);
    expect(reply.status, `${method} ${path}: ${JSON.stringify(reply.body)}`).toBeLessThan(300);
    return reply.body;
  };
  const team = await ok("POST", "/api/v1/teams", { name: "Packing", slug: "packing" });
  const application = await ok("POST", "/api/v1/applications", {
    name: "Line one",
    teamId: team.id,
  });
  const instance = await ok("POST", "/api/v1/projects", {
    name: "line-one",
    applicationId: application.id,
  });
  const flow = JSON.stringify([{ id: "a1", type: "inject", name: "Every minute" }]);
  await ok("PUT", `/api/v1/teams/${team.id}/library/entry`, {
    type: "flows",
    path: "lines/packing",
    body: flow,
  });
  const personal = await ok("POST", "/api/v1/user/tokens", { name: "kept" });
  const reads = [
    `/api/v1/user`,
    `/api/v1/teams/${team.id}`,
    `/api/v1/applications/${application.id}`,
    `/api/v1/projects/${instance.id}`,
    `/api/v1/teams/${team.id}/library/entry?type=flows&path=lines/packing`,
  ];
  return { team, token: personal.token as string, reads };
}

async function answers(base: string, token: string, reads: string[]) {
  const found: Record<string, unknown> = {};
  for (const path of reads) {
    const reply = await call(base, token, "GET", path);
    expect(reply.status, `GET ${path}`).toBe(200);
    found[path] = reply.body;
  }
  return found;
}

/**
 * A platform on `before`, populated, backed up while writes run (library entries, one at a time:
 * a consistent snapshot holds the first k of them and no other), restored into `after`'s empty
 * DATA_DIR and database, started again.
 */
async function roundTrip(
  before: Record<string, string>,
  after: Record<string, string>,
): Promise<string> {
  const first = await start(before);
  const admin = (await readFile(join(before.DATA_DIR!, "initial-admin-token"), "utf8")).trim();
  const made = await populate(first.url, admin);
  const expected = await answers(first.url, made.token, made.reads);
  // An instance's directory, which its tenant controls: a file kept, links skipped (never followed
  // out of DATA_DIR).
  const userDir = join(before.DATA_DIR!, "instances", "planted", "userDir");
  await mkdir(userDir, { recursive: true, mode: 0o700 });
  await writeFile(join(userDir, "flows.json"), "[]", { mode: 0o600 });
  // The local driver's instances' group passes through an instance's directory.
  await chmod(join(userDir, ".."), 0o710);
  await writeFile(join(scratch, "outside"), "not the platform's");
  await symlink(join(scratch, "outside"), join(userDir, "link"));
  await symlink(scratch, join(userDir, "dirlink"));

  let writing = true;
  let written = 0;
  const load = (async () => {
    while (writing) {
      const reply = await call(
        first.url,
        admin,
        "PUT",
        `/api/v1/teams/${made.team.id}/library/entry`,
        { type: "flows", path: `load/${String(written).padStart(5, "0")}`, body: "[]" },
      );
      expect(reply.status).toBe(200);
      written++;
    }
  })();
  // Some writes before the snapshot, some during.
  while (written < 5) await new Promise((resolve) => setTimeout(resolve, 10));
  const archive = join(scratch, `backup-${Date.now()}.tar.gz`);
  const made_ = await operation(before, "backup", "--output", archive);
  writing = false;
  await load;
  expect(made_.output).toContain("backup written to");
  expect(made_.code).toBe(0);
  expect((await stat(archive)).mode & 0o777).toBe(0o600);
  await first.stop();

  // The archive: a manifest, the rows, DATA_DIR's files but not the database's own nor the lock.
  const entries: string[] = [];
  await tar.list({ file: archive, onReadEntry: (entry) => entries.push(entry.path) });
  expect(entries).toContain("manifest.json");
  expect(entries).toContain("files/token-secret");
  expect(entries).toContain("files/instances/planted/userDir/flows.json");
  expect(entries.filter((e) => /link|outside/.test(e))).toEqual([]);
  expect(
    entries.filter((e) => /^files\/(postgres|pglite|platform\.lock|base-url)/.test(e)),
  ).toEqual([]);

  const restored = await operation(after, "restore", archive);
  expect(restored.output).toContain("restored");
  expect(restored.code).toBe(0);
  expect((await stat(after.DATA_DIR!)).mode & 0o777).toBe(0o700);
  expect((await stat(join(after.DATA_DIR!, "token-secret"))).mode & 0o777).toBe(0o600);
  const kept = join(after.DATA_DIR!, "instances", "planted", "userDir", "flows.json");
  expect((await stat(kept)).mode & 0o777).toBe(0o600);
  expect((await stat(join(kept, "../.."))).mode & 0o777).toBe(0o710);

  const second = await start(after);
  try {
    expect(await answers(second.url, made.token, made.reads)).toEqual(expected);
    // One snapshot: the load's entries 0 … k-1, no gap.
    const listed = await call(
      second.url,
      made.token,
      "GET",
      `/api/v1/teams/${made.team.id}/library`,
    );
    expect(listed.status).toBe(200);
    const load = await call(
      second.url,
      made.token,
      "GET",
      `/api/v1/teams/${made.team.id}/library?type=flows&path=load`,
    );
    const names = JSON.stringify(load.body ?? listed.body).match(/\b\d{5}\b/g) ?? [];
    const indexes = [...new Set(names.map(Number))].sort((a, b) => a - b);
    expect(indexes.length).toBeGreaterThanOrEqual(5);
    expect(indexes).toEqual(indexes.map((_, i) => i));
    // The platform goes on: a write after the restore (sequences came back too).
    const more = await call(second.url, made.token, "POST", "/api/v1/applications", {
      name: "After the restore",
      teamId: made.team.id,
    });
    expect(more.status).toBe(200);
  } finally {
    await second.stop();
  }
  return archive;
}

async function newDir(name: string) {
  return join(await mkdtemp(join(scratch, `${name}-`)), "data");
}

describe("backup and restore", { timeout: 4 * PROCESS_STARTS }, () => {
  test.runIf(ownServer)(
    "the platform's own PostgreSQL, backed up running, restored on a new DATA_DIR",
    async () => {
      await roundTrip(
        { DATA_DIR: await newDir("embedded-a"), DATABASE: "embedded-postgres" },
        { DATA_DIR: await newDir("embedded-b"), DATABASE: "embedded-postgres" },
      );
    },
  );

  test.runIf(testDatabaseUrl)("a PostgreSQL server of yours (DATABASE_URL)", async () => {
    const urlOf = async () => {
      const created = await createTestDb({ migrate: false });
      cleanups.push(() => created.drop());
      const url = new URL(testDatabaseUrl!);
      url.searchParams.set(
        "options",
        `-c search_path=${(created.config as { schema: string }).schema}`,
      );
      return url.toString();
    };
    const restoredInto = await urlOf();
    const archive = await roundTrip(
      { DATA_DIR: await newDir("url-a"), DATABASE_URL: await urlOf() },
      { DATA_DIR: await newDir("url-b"), DATABASE_URL: restoredInto },
    );
    // A database that already has the platform's tables: refused, untouched.
    const again = await operation(
      { DATA_DIR: await newDir("url-c"), DATABASE_URL: restoredInto },
      "restore",
      archive,
    );
    expect(again.output).toMatch(/already has tables/);
    expect(again.code).toBe(1);
  });

  test("PGlite: refused while its platform runs, backed up stopped, restored", async () => {
    const dataDir = await newDir("pglite-a");
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const db = await createDb({
      kind: "pglite",
      dataDir: join(dataDir, "pglite"),
      loadDataDir: await migratedTemplate(),
    });
    await migrateToLatest(db);
    await db
      .insertInto("platform_settings")
      .values({ key: "kept", value: JSON.stringify({ a: 1 }) } as never)
      .execute();
    await db.destroy();
    await writeFile(join(dataDir, "token-secret"), "k".repeat(48), { mode: 0o600 });
    // What a tenant may leave in its instance's directory: a pipe (which blocks whoever opens it
    // to read), a socket, a file no one may read (but root), a set-user-ID file, a sticky
    // directory. The backup goes on, with permissions only.
    const userDir = join(dataDir, "instances", "tenant", "userDir");
    await mkdir(userDir, { recursive: true, mode: 0o700 });
    execFileSync("mkfifo", [join(userDir, "pipe")]);
    const socket = createServer();
    await new Promise<void>((done) => socket.listen(join(userDir, "socket"), done));
    await writeFile(join(userDir, "locked"), "secret", { mode: 0o600 });
    await chmod(join(userDir, "locked"), 0o000);
    await writeFile(join(userDir, "setuid"), "#!/bin/sh\n");
    await chmod(join(userDir, "setuid"), 0o4750);
    await mkdir(join(userDir, "sticky"));
    await chmod(join(userDir, "sticky"), 0o1710);
    const env = { DATA_DIR: dataDir, DATABASE: "pglite" };
    const archive = join(scratch, "pglite.tar.gz");

    // A live process holds DATA_DIR's lock: this test's own.
    await writeFile(join(dataDir, "platform.lock"), JSON.stringify({ pid: process.pid }));
    const refused = await operation(env, "backup", "--output", archive);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/stop the platform/);
    await rm(join(dataDir, "platform.lock"));

    const made = await operation(env, "backup", "--output", archive);
    await new Promise((done) => socket.close(done));
    expect(made.output).toContain("backup written");
    expect(made.code).toBe(0);
    const modes = new Map<string, number>();
    let manifestText = "";
    await tar.list({
      file: archive,
      onReadEntry: (entry) => {
        modes.set(entry.path.replace(/\/$/, ""), entry.mode ?? 0);
        if (entry.path === "manifest.json") entry.on("data", (c: Buffer) => (manifestText += c));
      },
    });
    const tenant = "files/instances/tenant/userDir";
    expect(modes.has(`${tenant}/pipe`)).toBe(false);
    expect(modes.has(`${tenant}/socket`)).toBe(false);
    expect(modes.get(`${tenant}/setuid`)).toBe(0o750);
    expect(modes.get(`${tenant}/sticky`)).toBe(0o710);
    // Root reads a file of mode 000; anyone else leaves it out, and says so.
    const skipped = (JSON.parse(manifestText) as { skipped: unknown[] }).skipped;
    if (process.getuid?.() === 0) expect(skipped).toEqual([]);
    else {
      expect(skipped).toEqual([{ path: "instances/tenant/userDir/locked", reason: "EACCES" }]);
      expect(made.output).toMatch(/could not be read/);
    }

    // The same archive cut short: refused before anything is written.
    const cut = join(scratch, "cut.tar.gz");
    const whole = await readFile(archive);
    await writeFile(cut, whole.subarray(0, Math.floor(whole.length / 2)));
    const cutTarget = await newDir("pglite-cut");
    const damaged = await operation({ DATA_DIR: cutTarget, DATABASE: "pglite" }, "restore", cut);
    expect(damaged.output).toMatch(/not a readable Flowplane backup/);
    expect(damaged.code).toBe(1);
    await expect(stat(cutTarget)).rejects.toThrow();

    const target = await newDir("pglite-b");
    const restored = await operation({ DATA_DIR: target, DATABASE: "pglite" }, "restore", archive);
    expect(restored.code).toBe(0);
    expect(await readFile(join(target, "token-secret"), "utf8")).toBe("k".repeat(48));
    expect((await stat(join(target, "instances/tenant/userDir/setuid"))).mode & 0o7777).toBe(0o710);
    const back = await createDb({ kind: "pglite", dataDir: join(target, "pglite") });
    try {
      const row = await back
        .selectFrom("platform_settings")
        .selectAll()
        .where("key", "=", "kept")
        .executeTakeFirst();
      expect(row?.value).toEqual({ a: 1 });
      expect(await migrateToLatest(back)).toEqual([]);
    } finally {
      await back.destroy();
    }

    // A DATA_DIR that is not empty: refused, untouched.
    const again = await operation({ DATA_DIR: target, DATABASE: "pglite" }, "restore", archive);
    expect(again.code).toBe(1);
    expect(again.output).toMatch(/is not empty/);
  });

  test("an entry that cannot be read is left out and noted, the copy goes on", async () => {
    const dataDir = await newDir("unreadable");
    const userDir = join(dataDir, "instances", "tenant", "userDir");
    await mkdir(join(userDir, "closed"), { recursive: true });
    await writeFile(join(userDir, "flows.json"), "[]");
    await writeFile(join(userDir, "locked"), "x");
    await writeFile(join(userDir, "closed", "inside"), "x");
    const to = await mkdtemp(join(scratch, "copy-"));
    const warnings: unknown[] = [];
    const log = pino(
      { level: "warn" },
      { write: (line: string) => warnings.push(JSON.parse(line)) },
    );
    const copied = await copyDataDir(dataDir, to, log, {
      open: (path, flags) => {
        if (path.endsWith("/locked") || path.endsWith("/closed")) {
          return Promise.reject(Object.assign(new Error("EACCES"), { code: "EACCES" }));
        }
        if (path.endsWith("/flows.json") && !(flags & constants.O_NONBLOCK)) {
          throw new Error("a file opened that could block");
        }
        return open(path, flags);
      },
    });
    expect([...copied.skipped].sort((a, b) => a.path.localeCompare(b.path))).toEqual([
      { path: "instances/tenant/userDir/closed", reason: "EACCES" },
      { path: "instances/tenant/userDir/locked", reason: "EACCES" },
    ]);
    expect(warnings).toHaveLength(2);
    expect(await readFile(join(to, "instances/tenant/userDir/flows.json"), "utf8")).toBe("[]");
    expect((await readdir(join(to, "instances/tenant/userDir"))).sort()).toEqual([
      "closed",
      "flows.json",
    ]);
  });

  test("a restore keeps permissions only (no set-user-ID, set-group-ID or sticky bit)", async () => {
    const source = await mkdtemp(join(scratch, "bits-"));
    await mkdir(join(source, "files", "sticky"), { recursive: true });
    await mkdir(join(source, "database"));
    const migration = knownMigrations().at(-1)!;
    await writeFile(
      join(source, "manifest.json"),
      JSON.stringify({
        format: "flowplane-backup",
        formatVersion: 1,
        platformVersion: "9.9.9",
        migration,
        database: "pglite",
        createdAt: new Date().toISOString(),
        dump: { migration, tables: [], sequences: [] },
      }),
    );
    await writeFile(join(source, "files", "setuid"), "x");
    await chmod(join(source, "files", "setuid"), 0o6755);
    await chmod(join(source, "files", "sticky"), 0o1777);
    const archive = join(scratch, "bits.tar.gz");
    await tar.create({ gzip: true, cwd: source, file: archive, portable: true }, [
      "manifest.json",
      "database",
      "files",
    ]);
    const target = await newDir("bits");
    const restored = await operation({ DATA_DIR: target, DATABASE: "pglite" }, "restore", archive);
    expect(restored.output).toContain("restored");
    expect(restored.code).toBe(0);
    expect((await stat(join(target, "setuid"))).mode & 0o7777).toBe(0o710);
    expect((await stat(join(target, "sticky"))).mode & 0o7777).toBe(0o710);
  });

  test("archives that are not backups are refused, and nothing is written", async () => {
    const archive = (name: string, files: Record<string, string>) => {
      const blocks: Buffer[] = [];
      for (const [path, text] of Object.entries(files)) {
        const body = Buffer.from(text);
        const header = new tar.Header({
          path,
          mode: 0o600,
          size: body.length,
          type: "File",
          mtime: new Date(),
        });
        header.encode();
        blocks.push(header.block!, body, Buffer.alloc((512 - (body.length % 512)) % 512));
      }
      blocks.push(Buffer.alloc(1024));
      const file = join(scratch, name);
      return writeFile(file, gzipSync(Buffer.concat(blocks))).then(() => file);
    };
    const manifest = (migration: string) =>
      JSON.stringify({
        format: "flowplane-backup",
        formatVersion: 1,
        platformVersion: "9.9.9",
        migration,
        database: "pglite",
        createdAt: new Date().toISOString(),
        dump: { migration, tables: [], sequences: [] },
      });
    const cases: [string, string, RegExp][] = [
      [
        "corrupted.tar.gz",
        await writeFile(join(scratch, "corrupted.tar.gz"), "not a gzip at all").then(() =>
          join(scratch, "corrupted.tar.gz"),
        ),
        /not a readable Flowplane backup/,
      ],
      [
        "unknown",
        await archive("unknown.tar.gz", { "notes.txt": "hello" }),
        /not part of a backup/,
      ],
      [
        "traversal",
        await archive("traversal.tar.gz", {
          "manifest.json": manifest("2026-11-23T1300-team-sharing"),
          "files/../../escaped": "x",
        }),
        /'\.\.'/,
      ],
      ["absolute", await archive("absolute.tar.gz", { "/tmp/escaped": "x" }), /absolute path/],
      [
        "newer schema",
        await archive("newer.tar.gz", { "manifest.json": manifest("2099-01-01T0000-future") }),
        /made by a newer Flowplane/,
      ],
    ];
    // Each its own process, together.
    await Promise.all(
      cases.map(async ([what, file, message]) => {
        const target = await newDir(`refused-${what.replace(/\W/g, "-")}`);
        const outcome = await operation({ DATA_DIR: target, DATABASE: "pglite" }, "restore", file);
        expect(outcome.output, what).toMatch(message);
        expect(outcome.code, what).toBe(1);
        // Nothing made: not DATA_DIR, nothing beside it.
        await expect(stat(target), what).rejects.toThrow();
        expect(await readdir(join(target, ".."))).toEqual([]);
      }),
    );
  });
});

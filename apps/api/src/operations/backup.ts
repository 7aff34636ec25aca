// Backups and restore (`pnpm backup --output FILE`, `pnpm restore FILE`): one tar.gz holding a
// manifest, the database's rows (packages/db/src/dump.ts: one snapshot, restorable into any kind
// of database) and the files the platform keeps in DATA_DIR — the token key, instances'
// directories with their installed modules, the broker's store — but not the database's own files
// (the embedded cluster, PGlite's directory), the lock or base-url. The archive holds secrets: it
// is created 0600.
import {
  type Db,
  dumpDatabase,
  type DumpSummary,
  knownMigrations,
  loadDatabase,
  schemaTables,
  createDb,
} from "@flowplane/db";
import { createReadStream, createWriteStream } from "node:fs";
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  writeFile,
} from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Logger } from "pino";
import * as tar from "tar";
import { LOCK_FILE, lockDataDir, StartRefused } from "../bootstrap";
import { VERSION } from "../core/version";
import type { Config } from "../env";
import { copyDataDir, skipped, type SkippedEntry } from "./copy-files";
import { chooseDatabase, type DatabaseKind, openDb } from "../start-database";

/** What a backup or a restore refuses, with what to do instead: printed, not a stack. */
export class OperationRefused extends Error {}

export const ARCHIVE_FORMAT = "flowplane-backup";
export const ARCHIVE_FORMAT_VERSION = 1;

export interface Manifest {
  format: typeof ARCHIVE_FORMAT;
  formatVersion: number;
  platformVersion: string;
  /** The schema's newest migration when the snapshot was taken. */
  migration: string;
  /** The database the platform ran on (the dump restores into any kind). */
  database: DatabaseKind;
  createdAt: string;
  dump: DumpSummary;
  /** DATA_DIR's entries left out because they could not be read (a tenant's doing, mostly). */
  skipped?: SkippedEntry[];
}

/** Whether a platform runs on DATA_DIR now (its lock is held); else the lock, taken. */
async function takeOrFindLock(dataDir: string): Promise<(() => void) | "running"> {
  try {
    return await lockDataDir(dataDir);
  } catch (error) {
    if (error instanceof StartRefused && /in use by another Flowplane/.test(error.message))
      return "running";
    throw error;
  }
}

/** The running embedded server's socket directory, from its postmaster.pid (line 5). */
async function runningSocketDir(dataDir: string): Promise<string> {
  const text = await readFile(join(dataDir, "postgres", "postmaster.pid"), "utf8").catch(() => "");
  const dir = text.split("\n")[4]?.trim();
  if (!dir) {
    throw new OperationRefused(
      `the platform runs on ${dataDir} but its PostgreSQL is not up yet: try again in a moment`,
    );
  }
  return dir;
}

async function openForBackup(
  config: Config,
  kind: DatabaseKind,
  running: boolean,
  log: Logger,
): Promise<Db> {
  if (kind === "postgres")
    return createDb({ kind: "postgres", url: config.DATABASE_URL!, poolSize: 1 });
  if (!running) return openDb(config, kind, log);
  if (kind === "pglite") {
    throw new OperationRefused(
      `the platform runs on ${config.DATA_DIR}, and its PGlite database belongs to that one process: ` +
        "stop the platform, then run the backup (or move to the embedded PostgreSQL, which can be backed up while it runs)",
    );
  }
  const socketDir = await runningSocketDir(config.DATA_DIR);
  return createDb({
    kind: "postgres",
    url: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`,
    poolSize: 1,
  });
}

/** Writes a backup of the platform on `config` to `output` (0600, replaced whole). */
export async function backup(config: Config, output: string, log: Logger): Promise<Manifest> {
  const dataDir = config.DATA_DIR;
  if (!(await lstat(dataDir).catch(() => undefined))?.isDirectory()) {
    throw new OperationRefused(`DATA_DIR ${dataDir} does not exist: nothing to back up`);
  }
  const kind = await chooseDatabase(config, log);
  if (
    kind !== "postgres" &&
    !(await lstat(join(dataDir, kind === "pglite" ? "pglite" : "postgres")).catch(() => undefined))
  ) {
    throw new OperationRefused(`DATA_DIR ${dataDir} holds no database: is it the platform's?`);
  }
  const target = resolve(output);
  const stage = await mkdtemp(join(dirname(target), ".flowplane-backup-"));
  const lock = kind === "postgres" ? undefined : await takeOrFindLock(dataDir);
  try {
    await mkdir(join(stage, "database"), { mode: 0o700 });
    const db = await openForBackup(config, kind, lock === "running", log);
    let dump: DumpSummary;
    try {
      dump = await dumpDatabase(db, join(stage, "database"));
    } finally {
      await db.destroy();
    }
    await mkdir(join(stage, "files"), { mode: 0o700 });
    const copied = await copyDataDir(dataDir, join(stage, "files"), log);
    const manifest: Manifest = {
      format: ARCHIVE_FORMAT,
      formatVersion: ARCHIVE_FORMAT_VERSION,
      platformVersion: VERSION,
      migration: dump.migration,
      database: kind,
      createdAt: new Date().toISOString(),
      dump,
      skipped: copied.skipped,
    };
    await writeFile(join(stage, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`, {
      mode: 0o600,
    });
    const partial = join(dirname(target), `.${basename(target)}.${process.pid}.partial`);
    const out = createWriteStream(partial, { mode: 0o600 });
    await pipeline(
      tar.create({ gzip: true, cwd: stage, portable: true }, [
        "manifest.json",
        "database",
        "files",
      ]),
      out,
    );
    await chmod(partial, 0o600);
    await rename(partial, target);
    return manifest;
  } finally {
    if (typeof lock === "function") lock();
    await rm(stage, { recursive: true, force: true });
  }
}

const TOP = new Set(["manifest.json", "database", "files"]);

/** Why an entry may not be extracted, or undefined when it may. */
function badEntry(path: string, type: string): string | undefined {
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) return "an absolute path";
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) return "a path with '..'";
  if (!parts[0] || !TOP.has(parts[0])) return "not part of a backup";
  if (type !== "File" && type !== "Directory") return `an entry of type ${type}`;
  return undefined;
}

/** Reads the archive's manifest, refusing an archive that is not a backup or has a bad entry. */
async function inspect(file: string): Promise<Manifest> {
  let manifestText: string | undefined;
  let bad: string | undefined;
  try {
    await pipeline(
      createReadStream(file),
      tar.list({
        strict: true,
        onReadEntry: (entry) => {
          const why = badEntry(entry.path, entry.type);
          if (why && !bad) bad = `${entry.path}: ${why}`;
          if (entry.path === "manifest.json" && entry.type === "File") {
            const chunks: Buffer[] = [];
            entry.on("data", (chunk: Buffer) => chunks.push(chunk));
            entry.on("end", () => (manifestText = Buffer.concat(chunks).toString("utf8")));
          } else entry.resume();
        },
      }),
    );
  } catch (error) {
    throw new OperationRefused(
      `${file} is not a readable Flowplane backup (${(error as Error).message})`,
    );
  }
  if (bad) throw new OperationRefused(`${file} is not a Flowplane backup: it holds ${bad}`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(manifestText ?? "") as Manifest;
  } catch {
    throw new OperationRefused(`${file} is not a Flowplane backup: it has no readable manifest`);
  }
  if (manifest.format !== ARCHIVE_FORMAT || typeof manifest.migration !== "string") {
    throw new OperationRefused(`${file} is not a Flowplane backup: its manifest is not one`);
  }
  if (manifest.formatVersion !== ARCHIVE_FORMAT_VERSION) {
    throw new OperationRefused(
      `${file} is a backup of format ${manifest.formatVersion}, which this Flowplane (${VERSION}) does not read: restore it with the version that made it (${manifest.platformVersion}) or a newer one`,
    );
  }
  const known = knownMigrations();
  if (!known.includes(manifest.migration)) {
    throw new OperationRefused(
      `${file} was made by a newer Flowplane (${manifest.platformVersion}; its schema's newest migration is ${manifest.migration}, this one knows up to ${known.at(-1)}): restore it with that version or a newer one`,
    );
  }
  return manifest;
}

/**
 * Restores `file` into an empty (or absent) DATA_DIR and the database the environment says
 * (DATABASE_URL's, which must not hold the platform's tables yet, or a new one in DATA_DIR).
 */
export async function restore(config: Config, file: string, log: Logger): Promise<Manifest> {
  const dataDir = config.DATA_DIR;
  const found = await readdir(dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  if (found.length > 0) {
    throw new OperationRefused(
      `DATA_DIR ${dataDir} is not empty: restore into an empty directory (a new DATA_DIR, or this one emptied once its contents are kept elsewhere)`,
    );
  }
  const manifest = await inspect(file);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const release = await lockDataDir(dataDir);
  const stage = await mkdtemp(join(dirname(dataDir), ".flowplane-restore-"));
  let done = false;
  try {
    // The modes the files had (the platform's own umask made them; restore runs as the user it is
    // run as — the platform's — and every file is that user's), 0o777 at most, less any right for
    // others and any but passing through for the group (what the platform's start calls private, makePrivate
    // in bootstrap.ts): tar creates files with their entry's mode under the process's umask.
    const umask = process.umask(0o067);
    try {
      await tar.extract({
        file,
        cwd: stage,
        strict: true,
        dmode: 0o700,
        // Owned by the user restoring (even root: node-tar would otherwise keep the entries' owners).
        preserveOwner: false,
        filter: (path, entry) => {
          const read = entry as tar.ReadEntry;
          // Permissions only: never a set-user-ID, set-group-ID or sticky bit from the archive.
          if (typeof read.mode === "number") read.mode &= 0o777;
          return badEntry(path, read.type) === undefined;
        },
      });
    } finally {
      process.umask(umask);
    }
    const kind = await chooseDatabase(config, log);
    const db = await openDb(config, kind, log);
    try {
      if (kind === "postgres" && (await schemaTables(db)).length > 0) {
        throw new OperationRefused(
          "the database at DATABASE_URL already has tables: restore into an empty database (or schema)",
        );
      }
      await loadDatabase(db, join(stage, "database"), manifest.dump);
    } finally {
      await db.destroy();
    }
    const files = join(stage, "files");
    for (const name of await readdir(files).catch(() => [])) {
      if (skipped(name)) continue;
      await rename(join(files, name), join(dataDir, name));
    }
    done = true;
    return manifest;
  } finally {
    await rm(stage, { recursive: true, force: true });
    if (!done) {
      // The directory was empty: leave it so, for the next attempt.
      for (const name of await readdir(dataDir).catch(() => [])) {
        if (name !== LOCK_FILE) await rm(join(dataDir, name), { recursive: true, force: true });
      }
    }
    release();
  }
}

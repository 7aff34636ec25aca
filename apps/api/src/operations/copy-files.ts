// The files of a backup (backup.ts): DATA_DIR's regular files and directories copied into the
// staging directory, none of them followed out of DATA_DIR nor blocking the copy, whatever a tenant
// does in its instance's directory.
import { constants } from "node:fs";
import {
  chmod,
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
} from "node:fs/promises";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Logger } from "pino";
import { BASE_URL_FILE, LOCK_FILE } from "../bootstrap";

/** DATA_DIR's entries that are not kept: the database's own files, the lock, what a start rewrites. */
export function skipped(name: string): boolean {
  return (
    name === "postgres" ||
    name === "pglite" ||
    name === LOCK_FILE ||
    name === BASE_URL_FILE ||
    name.startsWith("postgres.init-") ||
    name.endsWith(".partial")
  );
}

/** What the copy of DATA_DIR's files opens with (a test puts its own in, to make one fail). */
export interface CopyIo {
  open: (path: string, flags: number) => Promise<FileHandle>;
}

/** An entry left out of the backup because it could not be read, and why (its error's code). */
export interface SkippedEntry {
  /** Relative to DATA_DIR. */
  path: string;
  reason: string;
}

/** Errors that mean the entry is gone meanwhile or is (now) a link: left out without a word. */
const GONE = new Set(["ELOOP", "ENOENT", "ENOTDIR"]);
/**
 * Errors an entry's owner can cause (a tenant controls its instance's directory: `chmod 000`, a
 * socket, a name too long…): the entry is left out with a warning, listed in the manifest, and the
 * backup goes on. Others (the disk, the process's limits) fail the backup.
 */
const UNREADABLE = new Set(["EACCES", "EPERM", "ENXIO", "ENODEV", "EISDIR", "ENAMETOOLONG"]);

interface CopyContext {
  root: string;
  io: CopyIo;
  log: Logger;
  skipped: SkippedEntry[];
}

/** Undefined after an error `GONE` or `UNREADABLE` (the latter noted); else throws it. */
function entryError(ctx: CopyContext, path: string, error: unknown): undefined {
  const code = (error as NodeJS.ErrnoException).code ?? "";
  if (GONE.has(code)) return undefined;
  if (!UNREADABLE.has(code)) throw error;
  const relative = path === ctx.root ? "." : path.slice(ctx.root.length + 1);
  ctx.skipped.push({ path: relative, reason: code });
  ctx.log.warn(
    { path: relative, reason: code },
    "backup: an entry of DATA_DIR could not be read, left out",
  );
  return undefined;
}

/**
 * Opens `path` (absolute, with no link in it) without following a link: not its last component
 * (O_NOFOLLOW), nor one above it swapped for a link meanwhile — where /proc tells, the opened
 * file's path must be the one asked. Never blocks (O_NONBLOCK: a pipe swapped in opens at once,
 * and its type then says it is no file). Undefined when it is not what was asked, is gone, or
 * cannot be read (`entryError`).
 */
async function openInside(
  ctx: CopyContext,
  path: string,
  flags: number,
): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await ctx.io.open(path, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return entryError(ctx, path, error);
  }
  const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => path);
  if (opened !== path) {
    await handle.close();
    return undefined;
  }
  return handle;
}

/**
 * Copies DATA_DIR's regular files and directories (their permissions kept, 0o777 at most: no
 * set-user-ID, set-group-ID or sticky bit) into `to`. Symbolic links (and sockets, pipes,
 * devices) are skipped, never followed nor opened for reading: a tenant controls its instance's
 * directory, and may make any entry a link or swap one in while the copy walks — so each file is
 * opened without following links and checked to be the one meant (`openInside`), and to be a
 * regular file, before it is read. An entry that cannot be read (`UNREADABLE`) is left out and
 * noted in `ctx.skipped`. Returns how many files were copied.
 */
async function copyTree(ctx: CopyContext, from: string, to: string, top: boolean): Promise<number> {
  let count = 0;
  const here = await openInside(ctx, from, constants.O_RDONLY | constants.O_DIRECTORY);
  if (!here) return 0;
  await here.close();
  let entries;
  try {
    entries = await readdir(from, { withFileTypes: true });
  } catch (error) {
    return entryError(ctx, from, error) ?? 0;
  }
  for (const entry of entries) {
    if (top && skipped(entry.name)) continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      const info = await lstat(source).catch((error: unknown) => entryError(ctx, source, error));
      if (!info?.isDirectory()) continue;
      await mkdir(target, { mode: 0o700 });
      count += await copyTree(ctx, source, target, false);
      await chmod(target, info.mode & 0o777);
    } else if (entry.isFile()) {
      const file = await openInside(ctx, source, constants.O_RDONLY);
      if (!file) continue; // Gone meanwhile (a running platform), not what it was, or unreadable.
      try {
        const info = await file.stat();
        if (!info.isFile()) continue;
        await pipeline(
          file.createReadStream({ autoClose: false }),
          createWriteStream(target, { mode: 0o600 }),
        );
        await chmod(target, info.mode & 0o777);
        count++;
      } finally {
        await file.close();
      }
    }
  }
  return count;
}

/**
 * Copies DATA_DIR's files (but not the database's own, the lock, base-url) into `to`, an empty
 * directory: how many, and the entries left out because they could not be read.
 */
export async function copyDataDir(
  dataDir: string,
  to: string,
  log: Logger,
  io: CopyIo = { open: (path, flags) => open(path, flags) },
): Promise<{ files: number; skipped: SkippedEntry[] }> {
  const root = await realpath(dataDir);
  const ctx: CopyContext = { root, io, log, skipped: [] };
  const files = await copyTree(ctx, root, to, true);
  return { files, skipped: ctx.skipped };
}

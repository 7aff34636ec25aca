// Start-up work. Before anything is touched: the port must be free, and DATA_DIR must belong to no
// other running platform (its lock). Then DATA_DIR is made private to the platform's user, and on
// first start come the token secret and the platform administrator with one token whose value is
// written to a 0600 file (never logged). A database that already has users is never touched.
import { generateToken, hashPassword, randomBase62, tokenDigest } from "@flowplane/auth";
import { countUsers, type Db, insertToken, insertUser, lockForTransaction } from "@flowplane/db";
import { readFileSync, unlinkSync } from "node:fs";
import {
  chmod,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  unlink,
  writeFile,
} from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { recordFirstAdmin } from "./accounts/index";

export const INITIAL_TOKEN_FILE = "initial-admin-token";
export const INITIAL_PASSWORD_FILE = "initial-admin-password";
/**
 * Where the running platform is reached (BASE_URL; with PORT=0, where it listens), written once it
 * listens: what a script or the getting-started guide reads rather than assume port 3000.
 */
export const BASE_URL_FILE = "base-url";
const SECRET_FILE = "token-secret";
/** Which process runs the platform on a DATA_DIR: `{ pid, started, boot, command }`. */
export const LOCK_FILE = "platform.lock";

/** A start that must not go on, with a message for the person who started it. */
export class StartRefused extends Error {}

/**
 * Refuses when something already listens on the port, before DATA_DIR is created or changed, with
 * how to choose another.
 */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => reject(portRefusal(error, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** The error to give for a failure to listen on the platform's port. */
export function portRefusal(error: unknown, host: string, port: number): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") {
    return new StartRefused(
      `Port ${port} on ${host} is already in use (another Flowplane, or another program). ` +
        `Choose another port with PORT, e.g. PORT=${port === 65535 ? 3001 : port + 1} pnpm start`,
    );
  }
  if (code === "EACCES") {
    return new StartRefused(
      `Port ${port} on ${host} needs privileges this process does not have. ` +
        `Choose another port with PORT, e.g. PORT=3000 pnpm start`,
    );
  }
  if (code === "EADDRNOTAVAIL") {
    return new StartRefused(`${host} is not an address of this machine: set HOST to one that is`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

interface Holder {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat), when known. */
  started?: number;
  boot?: string;
  command?: string;
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** What identifies a process across pid reuse: its start time and the boot it started in. */
function identity(pid: number): Pick<Holder, "started" | "boot"> {
  const stat = readProc(`/proc/${pid}/stat`);
  // The fields after the command name (in parentheses, which may itself hold spaces and ")").
  const fields = stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
  const started = fields ? Number(fields[19]) : NaN;
  const boot = readProc("/proc/sys/kernel/random/boot_id")?.trim();
  return {
    ...(Number.isFinite(started) && { started }),
    ...(boot && { boot }),
  };
}

function holds(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  // The pid lives; the same process only if it started when the holder did (pids are reused).
  const now = identity(holder.pid);
  if (holder.boot && now.boot && holder.boot !== now.boot) return false;
  if (holder.started !== undefined && now.started !== undefined)
    return holder.started === now.started;
  return true;
}

/**
 * Takes DATA_DIR for this process, or refuses (naming the directory and the process that holds
 * it) before anything in it is changed: the embedded database belongs to one process, and two
 * platforms on one directory lose what one of them acknowledged. A lock whose process is gone
 * (killed with `kill -9`, a crash) is taken over. Returns the release, also run at exit.
 */
export async function lockDataDir(dataDir: string): Promise<() => void> {
  const path = join(dataDir, LOCK_FILE);
  const own: Holder = {
    pid: process.pid,
    ...identity(process.pid),
    command: process.argv.slice(1).join(" ").slice(0, 200),
  };
  const text = `${JSON.stringify(own)}\n`;
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const file = await open(path, "wx", 0o600);
      try {
        await file.writeFile(text);
      } finally {
        await file.close();
      }
      // Two starts that both found the same stale lock: the one whose lock is not there lost.
      await new Promise((resolve) => setTimeout(resolve, 20));
      if ((await readFile(path, "utf8").catch(() => "")) !== text) continue;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        try {
          if (readFileSync(path, "utf8") === text) unlinkSync(path);
        } catch {
          // Gone already.
        }
      };
      process.once("exit", release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const found = await readFile(path, "utf8").catch(() => undefined);
    if (found === undefined) continue;
    let holder: Holder | undefined;
    try {
      holder = JSON.parse(found) as Holder;
    } catch {
      // Being written by a process starting this moment: read again.
      if (attempt < 10) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
    }
    if (holder && Number.isInteger(holder.pid) && holds(holder)) {
      throw new StartRefused(
        `DATA_DIR ${dataDir} is in use by another Flowplane: process ${holder.pid}` +
          `${holder.command ? ` (${holder.command})` : ""}. ` +
          `Stop that one first, or give this one a DATA_DIR of its own.`,
      );
    }
    // Stale: removed only while it is still the one judged (another start may have replaced it).
    if ((await readFile(path, "utf8").catch(() => undefined)) === found) {
      await unlink(path).catch(() => {});
    }
  }
  throw new StartRefused(`DATA_DIR ${dataDir}: could not take its lock (${path})`);
}

/**
 * DATA_DIR readable by the platform's user only: 0700, and nothing inside open to others. A
 * directory made before this rule (0755, with 0644 files) is tightened once, recursively. A
 * group's right only to pass through (0710: the local driver's instances' group) is not open.
 * Returns whether anything changed.
 */
export async function makePrivate(dataDir: string): Promise<boolean> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const self = process.getuid?.();
  const open = (mode: number) => (mode & 0o067) !== 0;
  const entries = await readdir(dataDir, { withFileTypes: true });
  const top = await stat(dataDir);
  let loose = open(top.mode);
  for (const entry of entries) {
    if (!loose) loose = open((await stat(join(dataDir, entry.name))).mode);
  }
  if (!loose) return false;
  const tighten = async (path: string) => {
    const info = await stat(path);
    if (self !== undefined && info.uid !== self) return;
    if (open(info.mode)) await chmod(path, info.mode & 0o700);
    if (info.isDirectory()) {
      for (const entry of await readdir(path, { withFileTypes: true })) {
        if (entry.isDirectory() || entry.isFile()) await tighten(join(path, entry.name));
      }
    }
  };
  await tighten(dataDir);
  return true;
}

/** FLOWPLANE_TOKEN_SECRET, or the secret kept in DATA_DIR (generated on first start). */
export async function loadTokenSecret(dataDir: string, configured?: string): Promise<string> {
  if (configured) return configured;
  const path = join(dataDir, SECRET_FILE);
  await mkdir(dataDir, { recursive: true });
  try {
    await writeFile(path, randomBase62(48), { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return (await readFile(path, "utf8")).trim();
}

/**
 * Creates `admin` when the database has no user yet: a token, and a generated password marked
 * expired (the first sign-in chooses a new one), each written to a 0600 file in DATA_DIR. Returns
 * the token file's path when it did. Replicas starting together agree through an advisory lock.
 */
export async function ensureInitialAdmin(
  db: Db,
  secret: string,
  dataDir: string,
): Promise<string | undefined> {
  const path = join(dataDir, INITIAL_TOKEN_FILE);
  const passwordPath = join(dataDir, INITIAL_PASSWORD_FILE);
  const password = randomBase62(20);
  const passwordHash = await hashPassword(password);
  return db
    .transaction()
    .execute(async (trx) => {
      await lockForTransaction(trx, "flowplane.initial-admin");
      if ((await countUsers(trx)) > 0) return undefined;

      const user = await insertUser(trx, {
        username: "admin",
        name: "Administrator",
        admin: true,
        passwordHash,
        passwordExpired: true,
      });
      const value = generateToken("personalAccessToken");
      const token = await insertToken(trx, {
        userId: user.id,
        parentId: null,
        name: "initial-admin-token",
        digest: tokenDigest(secret, value),
        scope: { readOnly: false, adminOptIn: true, teamIds: null, expiresAt: null },
      });
      await recordFirstAdmin(trx, user, token);
      await mkdir(dataDir, { recursive: true });
      // "wx": never overwrite. Written before commit; removed again if the commit fails.
      await writeFile(path, `${value}\n`, { mode: 0o600, flag: "wx" });
      await writeFile(passwordPath, `${password}\n`, { mode: 0o600, flag: "wx" });
      return path;
    })
    .catch(async (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        await rm(path, { force: true });
        await rm(passwordPath, { force: true });
      }
      throw error;
    });
}

/** Writes DATA_DIR/base-url (whole or not at all: a reader never sees half a URL). */
export async function recordBaseUrl(dataDir: string, url: string): Promise<void> {
  const path = join(dataDir, BASE_URL_FILE);
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, `${url}\n`, { mode: 0o600 });
  await rename(partial, path);
}

// What the platform does to an instance's files while it runs as root: the user directory and tmp
// are the tenant's, who can make any entry a link (and swap a directory for one while the
// platform walks it, between a look and a step inside). Node.js has no openat(): its recursive
// rm and a walk of lstat/readdir follow such a swap. So the walks are GNU's `find`, `chown` and
// `rm`, whose tree walk (fts, physical) opens each directory without following a link and checks
// it is the one it looked at; and they run as the tree's owner (the instance's user id) where
// that is not the platform's, so that a way out would meet only what that user may do.
import { spawn } from "node:child_process";
import { lstat } from "node:fs/promises";

/** A host user and group to run as. */
export interface Owner {
  uid: number;
  gid: number;
}

/** Runs `command`, as `owner` when given; rejects with what it said when it fails. */
function run(command: string, args: readonly string[], owner?: Owner, cwd = "/"): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      // Entered before the ids change: the owner needs no way through the directories above.
      cwd,
      env: { PATH: "/usr/bin:/bin", LC_ALL: "C" },
      stdio: ["ignore", "ignore", "pipe"],
      ...(owner && { uid: owner.uid, gid: owner.gid }),
    });
    let said = "";
    child.stderr.on("data", (chunk: Buffer) => (said = (said + chunk.toString()).slice(-2000)));
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} failed (${code}): ${said.trim().split("\n").at(-1)}`)),
    );
  });
}

/** Whether `path` is a directory itself (not a link to one). */
async function isDirectory(path: string): Promise<boolean> {
  return lstat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

/** An empty directory at `path` (its owner and mode kept when it exists), emptied as `owner`. */
export async function emptyDirectory(path: string, owner?: Owner): Promise<void> {
  if (!(await isDirectory(path))) return;
  await run("find", ["-P", ".", "-mindepth", "1", "-delete"], owner, path);
}

/** Gives a tree to an owner without following links (an instance's files may point anywhere). */
export async function chownTree(path: string, uid: number, gid: number): Promise<void> {
  await run("chown", ["-R", "-P", "-h", `${uid}:${gid}`, "--", path]);
}

/**
 * Who a tree's work runs as: its owner when that is not the platform's own user (an instance's
 * user id, when the platform is root), else the platform (undefined).
 */
export async function ownerOf(path: string): Promise<Owner | undefined> {
  const info = await lstat(path).catch(() => undefined);
  if (!info || info.uid === process.getuid?.()) return undefined;
  return { uid: info.uid, gid: info.gid };
}

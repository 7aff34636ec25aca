// The Unix sockets between the platform and an instance's Node-RED: the editor's socket (the
// platform reaches Node-RED's editor over HTTP), listened on by the driver and handed to Node-RED,
// and the platform socket (Node-RED reaches the platform), accepted by the driver; paths too long
// for a socket reached through a descriptor of their directory.
import { closeSync, chmodSync, constants as fsConstants, openSync, renameSync } from "node:fs";
import { chmod, chown, mkdir, rm } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import { createServer, type Server } from "node:net";
import { basename, dirname, join, sep } from "node:path";
import type { InstanceSpec } from "../driver";
import type { LocalDriverOptions } from "./options";

/** The platform socket's name in `<instance dir>/run` (in the sandbox, /run/flowplane). */
export const PLATFORM_SOCKET = "platform.sock";

export interface EditorSocket {
  /** Where the editor answers once Node-RED listens: `<instance dir>/editor.sock`. */
  path: string;
  /** The listening socket's descriptor, to hand to Node-RED. */
  fd: number;
  /** After the spawn: the socket takes its name and the platform's copy is closed. */
  handOver(): void;
}

/**
 * The editor's socket: listened on by the driver (in the instance's directory, which is the
 * platform's: never a path the tenant could turn into a link) and handed to Node-RED as a
 * descriptor, on which it accepts (settings.cjs). It is made under a temporary name and renamed
 * once Node-RED has its copy, because libuv removes a listener's file when the platform closes
 * its own copy; connections made before Node-RED accepts wait in the backlog.
 */
export async function listenEditor(dir: string): Promise<EditorSocket> {
  const real = join(dir, "editor.sock");
  const path = socketPath(real);
  const realTemporary = join(dir, `.e${randomBytes(4).toString("hex")}`);
  const temporary = socketPath(realTemporary);
  await rm(real, { force: true });
  const server = createServer();
  await new Promise<void>((resolveListen, fail) => {
    server.once("error", fail);
    server.listen(temporary, () => {
      server.off("error", fail);
      resolveListen();
    });
  });
  server.on("error", () => {});
  const fd = (server as unknown as { _handle: { fd: number } })._handle.fd;
  return {
    path,
    fd,
    handOver() {
      try {
        renameSync(realTemporary, real);
        chmodSync(real, 0o600);
      } finally {
        server.close();
      }
    },
  };
}

/** Directories (the platform's own) held open for the sockets in them, by path. */
const socketDirs = new Map<string, number>();

/**
 * A path for the Unix socket at `path` that fits: the kernel keeps 107 bytes of a socket's path,
 * and DATA_DIR may be deep (a clone's `.data`). A longer one is reached through a descriptor of
 * its directory, held open by this process (`/proc/self/fd/<n>/<name>`, which Linux resolves
 * like any path): valid in this process only, which is the one that listens and connects.
 */
export function socketPath(path: string): string {
  if (Buffer.byteLength(path) <= 107) return path;
  const dir = dirname(path);
  let fd = socketDirs.get(dir);
  if (fd === undefined) {
    fd = openSync(dir, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW);
    socketDirs.set(dir, fd);
  }
  const alias = `/proc/self/fd/${fd}/${basename(path)}`;
  if (Buffer.byteLength(alias) > 107) throw new Error(`${path} is too long for a Unix socket`);
  return alias;
}

/** Closes the descriptors held for sockets in `dir` and below (the directory is going). */
export function forgetSocketDirs(dir: string): void {
  for (const [held, fd] of socketDirs) {
    if (held === dir || held.startsWith(dir + sep)) {
      socketDirs.delete(held);
      try {
        closeSync(fd);
      } catch {
        // Already closed.
      }
    }
  }
}

/** Whether an HTTP server answers (anything) on the Unix socket at `socketPath`. */
export function answersHttp(socketPath: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolveAnswer) => {
    const request = httpRequest({ socketPath, path: "/", method: "GET", timeout: timeoutMs });
    request.on("response", (response) => {
      response.resume();
      resolveAnswer(true);
    });
    request.on("timeout", () => request.destroy());
    request.on("error", () => resolveAnswer(false));
    request.end();
  });
}

/** Whether anything answers HTTP on the editor's socket before the time is up. */
export async function waitForAnswer(socketPath: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await answersHttp(socketPath, 2_000)) return true;
    // A refused connection on a local socket costs microseconds: asking often starts sooner.
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

/**
 * The instance's platform socket, listening while its Node-RED (or npm) runs, when the
 * platform takes connections (`platformConnection`) and the instance calls it: every
 * connection is handed to the platform as it comes. It is in `<dir>/run`, the platform's
 * (0710, the instances' group passes), and only the instance's user may connect (0600, its own).
 */
export async function openPlatformSocket(
  accept: LocalDriverOptions["platformConnection"],
  instance: { id: string; dir: string; uid: number | undefined },
  spec: InstanceSpec,
  group: number | undefined,
): Promise<{ server: Server } | undefined> {
  if (!accept || !spec.platformUrl) return undefined;
  const runDir = join(instance.dir, "run");
  await mkdir(runDir, { recursive: true, mode: 0o700 });
  if (group !== undefined) {
    await chown(runDir, process.getuid!(), group);
    await chmod(runDir, 0o710);
  }
  const real = join(runDir, PLATFORM_SOCKET);
  // The directory is the platform's: whatever is at the path was left by an earlier run.
  await rm(real, { force: true });
  const path = socketPath(real);
  const server = createServer((socket) => {
    socket.on("error", () => {});
    try {
      accept(instance.id, socket);
    } catch {
      socket.destroy();
    }
  });
  await new Promise<void>((resolveListen, fail) => {
    server.once("error", fail);
    server.listen(path, () => {
      server.off("error", fail);
      resolveListen();
    });
  });
  server.on("error", () => {});
  try {
    if (group !== undefined) await chown(path, instance.uid!, group);
    await chmod(path, 0o600);
  } catch (error) {
    server.close();
    throw error;
  }
  return { server };
}

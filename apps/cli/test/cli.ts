// `flowplane ...` run in-process, as a user would run it: its own config directory and environment,
// and everything it prints captured.
import { mkdtempSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { afterAll, expect } from "vitest";
import { run } from "../src/index";
import type { Input } from "../src/prompt";

// Every directory a test file makes lives in one, removed when the file is done.
const root = mkdtempSync(join(tmpdir(), "flowplane-cli-test-"));
afterAll(() => rm(root, { recursive: true, force: true }));

/** A new empty directory, removed after the test file. */
export const scratchDir = () => mkdtemp(join(root, "dir-"));

export interface Outcome {
  status: number;
  stdout: string;
  stderr: string;
}

export interface User {
  /** The user's config directory; the login is stored in its flowplane/config.json. */
  configDir: string | undefined;
  env: Record<string, string>;
  flowplane(...args: string[]): Promise<Outcome>;
  /** The same, with `stdin` as its standard input: text (as if piped in), or a stream. */
  flowplaneWith(stdin: string | Input, ...args: string[]): Promise<Outcome>;
  /** The same, started: what it prints can be waited for while it runs. */
  start(...args: string[]): Running;
  /** The same, its standard output a terminal (a live view is drawn again in place). */
  startAtTerminal(...args: string[]): Running;
}

/** A command still running. */
export interface Running {
  /** Resolves once its standard output holds `text`; rejects if it ends without printing it. */
  printed(text: string): Promise<void>;
  /** How it ended. */
  outcome: Promise<Outcome>;
}

/** A user with an empty config directory of their own, and only `env` in the environment. */
export async function newUser(env: Record<string, string> = {}): Promise<User> {
  return userWith(await scratchDir(), env);
}

export function userWith(configDir: string | undefined, env: Record<string, string>): User {
  const user: User = {
    configDir,
    env,
    flowplane: (...args) => user.flowplaneWith("", ...args),
    flowplaneWith: (stdin, ...args) => started(stdin, args).outcome,
    start: (...args) => started("", args),
    startAtTerminal: (...args) => started("", args, true),
  };
  const started = (stdin: string | Input, args: string[], isTTY = false): Running => {
    let stdout = "";
    let stderr = "";
    const waiting = new Set<{ text: string; resolve: () => void }>();
    const outcome = run(["node", "flowplane", ...args], {
      stdout: {
        isTTY,
        write: (text: string) => {
          stdout += text;
          for (const wait of waiting) {
            if (stdout.includes(wait.text)) {
              waiting.delete(wait);
              wait.resolve();
            }
          }
        },
      },
      stderr: { write: (text: string) => (stderr += text) },
      stdin: typeof stdin === "string" ? Readable.from([stdin]) : stdin,
      env,
      configDir,
    }).then((status) => ({ status, stdout, stderr }));
    return {
      outcome,
      printed: (text) =>
        stdout.includes(text)
          ? Promise.resolve()
          : new Promise<void>((resolve, reject) => {
              const wait = { text, resolve };
              waiting.add(wait);
              void outcome.then((ended) => {
                if (!waiting.delete(wait)) return;
                reject(
                  new Error(
                    `ended (${ended.status}) without printing ${text}:\n${ended.stdout}${ended.stderr}`,
                  ),
                );
              });
            }),
    };
  };
  return user;
}

/** Runs `flowplane ...args` as `user`, expecting it to succeed quietly, and returns what it printed. */
export async function ok(user: User, ...args: string[]): Promise<string> {
  const outcome = await user.flowplane(...args);
  expect(outcome.stderr, args.join(" ")).toBe("");
  expect(outcome.status, args.join(" ")).toBe(0);
  return outcome.stdout;
}

/** `users create username --name name ...options` run by `by`, `password` piped in. */
export function createUserAs(
  by: User,
  password: string,
  username: string,
  name: string,
  ...options: string[]
): Promise<Outcome> {
  return by.flowplaneWith(`${password}\n`, "users", "create", username, "--name", name, ...options);
}

/** `login --username username --url url ...more` run by `user`, `password` piped in. */
export function loginAs(
  user: User,
  url: string,
  username: string,
  password: string,
  ...more: string[]
): Promise<Outcome> {
  return user.flowplaneWith(
    `${password}\n`,
    "login",
    "--username",
    username,
    "--url",
    url,
    ...more,
  );
}

export function loginFileOf(user: User): string {
  return join(user.configDir!, "flowplane", "config.json");
}

/**
 * The cell under `header` in row `row` (1: the first under the header line) of a printed table.
 * Throws when the cell does not start exactly under its header: the columns are not aligned.
 */
export function cell(table: string, row: number, header: string): string {
  const lines = table.trimEnd().split("\n");
  // The header as a whole (NAME, not the end of USERNAME).
  const start = ` ${lines[0]!} `.indexOf(` ${header} `);
  const line = lines[row];
  if (start < 0 || line === undefined) throw new Error(`no column ${header} or no row ${row}`);
  if (line[start] === " " || (start > 0 && line[start - 1] !== " ")) {
    throw new Error(`column ${header} is not aligned in:\n${table}`);
  }
  return line.slice(start).split(/ {2,}/)[0]!;
}

/**
 * A terminal for `flowplaneWith`: a stream that says it is a TTY, with `typed` already typed into
 * it (each line ending with Enter), as a person answers a question.
 */
export function terminal(...typed: string[]): Input {
  const stream = Object.assign(new PassThrough(), {
    isTTY: true,
    setRawMode: () => stream,
  });
  for (const line of typed) stream.write(`${line}\n`);
  return stream;
}

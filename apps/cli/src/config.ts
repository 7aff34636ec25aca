// The stored login: `<config dir>/flowplane/config.json`, a server URL and a token (and, when
// `login --username` created the token, its id, so that `logout` revokes it, and its expiry). It holds a secret, so
// the file is 0600 in a 0700 directory, and it is replaced whole, never half-written.
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { z } from "zod";
import { CliError } from "./errors";

export const DEFAULT_URL = "http://127.0.0.1:3000";

/** An http(s) URL of a Flowplane server, without a trailing slash (paths are appended to it). */
export const ServerUrl = z
  .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" })
  .transform((url) => url.replace(/\/+$/, ""));

const Login = z.object({
  url: ServerUrl,
  token: z.string().min(1),
  /**
   * Set when `login --username` created the token for this login: `logout` revokes it. Absent for
   * a token given to `login --token`, which is the user's own to keep or revoke.
   */
  tokenId: z.string().min(1).optional(),
  /**
   * When the token stops working (null: never), where the CLI knows it: for the token that
   * `login --username` created. A refused token is then said to have expired, or not.
   */
  expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
});
export type Login = z.infer<typeof Login>;

/**
 * `userConfigDir`, or XDG_CONFIG_HOME, or ~/.config, then `flowplane/config.json`. The XDG base
 * directory spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
 */
export function loginFile(xdgConfigHome: string | undefined, userConfigDir?: string): string {
  const base =
    userConfigDir ??
    (xdgConfigHome && isAbsolute(xdgConfigHome) ? xdgConfigHome : join(homedir(), ".config"));
  return join(base, "flowplane", "config.json");
}

export async function readLogin(path: string): Promise<Login | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`, "invalid_config");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const result = Login.safeParse(parsed);
  if (!result.success) {
    throw new CliError(
      `${path} is not a stored login; run \`flowplane login\` again`,
      "invalid_config",
    );
  }
  return result.data;
}

/** Removes the stored login; false when there was none. */
export async function removeLogin(path: string): Promise<boolean> {
  try {
    await rm(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw new CliError(`cannot remove ${path}: ${(error as Error).message}`, "invalid_config");
  }
}

export async function writeLogin(path: string, login: Login): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode does not apply to a directory that already exists.
  await chmod(dir, 0o700);
  // A new file, renamed over the old: a reader never sees half a file, and an old file with
  // looser permissions does not keep them.
  const temporary = join(dir, `.config.json.${process.pid}.tmp`);
  try {
    await writeFile(temporary, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

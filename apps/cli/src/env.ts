// The environment variables the CLI reads, parsed in one place: nothing else reads process.env.
import { z } from "zod";
import { ServerUrl } from "./config";
import { CliError } from "./errors";

const Env = z.object({
  FLOWPLANE_TOKEN: z.string().optional().describe("Overrides the token stored by `login`"),
  FLOWPLANE_URL: ServerUrl.optional().describe("Overrides the server URL stored by `login`"),
  XDG_CONFIG_HOME: z.string().optional().describe("Where config.json lives (default ~/.config)"),
});
export type Env = z.infer<typeof Env>;

/** The variables of this process, for `run`; tests pass their own. */
export function processEnv(): Record<string, string | undefined> {
  return process.env;
}

export function parseEnv(source: Record<string, string | undefined>): Env {
  // An empty variable is an unset one, as in a shell's `FLOWPLANE_TOKEN= flowplane whoami`.
  const result = Env.safeParse(
    Object.fromEntries(Object.entries(source).filter(([, value]) => value !== "")),
  );
  if (result.success) return result.data;
  // The message names the variable but never echoes its value: it may hold a token.
  const names = [...new Set(result.error.issues.map((issue) => issue.path.join(".")))];
  throw new CliError(`${names.join(", ")}: ${result.error.issues[0]!.message}`, "invalid_config");
}

// What every command is given: where to write and read, the environment, the stored login, and a
// client for the server that the environment and the stored login name.
import { Readable } from "node:stream";
import { type Client, createClient, type TokenSource } from "./client";
import { DEFAULT_URL, type Login, loginFile, readLogin } from "./config";
import { type Env, parseEnv } from "./env";
import { CliError } from "./errors";
import { checkFlowplane } from "./identify";
import { canAsk, confirm, type Input, readSecret, type SecretOptions, type Writer } from "./prompt";

export type { Writer };

export interface Io {
  stdout: Writer;
  stderr: Writer;
  env: Record<string, string | undefined>;
  /** Where passwords are read from (default: nothing, as from /dev/null). */
  stdin?: Input;
  /** The user's config directory, instead of XDG_CONFIG_HOME or ~/.config (tests). */
  configDir?: string;
}

export interface Context {
  /** For people or, with --json, for scripts. */
  print(text: string): void;
  /** Notes that must not mix into the output a script reads. */
  warn(text: string): void;
  /** A line for the person at the terminal, on stderr (nothing, without a terminal). */
  tell(text: string): void;
  /** Whether stdout is a terminal (a live view is drawn again in place) rather than a pipe. */
  printsToTerminal(): boolean;
  /** Parsed on first use, so that `--help` works whatever the environment holds. */
  env(): Env;
  loginFile(): string;
  /**
   * A password: asked for on stderr without echo when stdin is a terminal, else stdin's first line.
   * Never an argument, which would land in the shell's history.
   */
  readSecret(prompt: string, options?: SecretOptions): Promise<string>;
  /** Whether a person at a terminal can answer a question (`confirm`). */
  canAsk(): boolean;
  /** A yes-or-no question asked at the terminal: true only for "y" or "yes". */
  confirm(question: string): Promise<boolean>;
  /** FLOWPLANE_TOKEN and FLOWPLANE_URL override the stored login, each on its own. */
  connect(): Promise<Connection>;
}

export interface Connection {
  client: Client;
  url: string;
  /** The token in use, for the routes the typed client has no procedure for (a log's stream). */
  token: string;
  /** Where the token came from. */
  source: TokenSource;
  /** The stored login, when its token is the one in use. */
  login?: Login;
}

export function createContext(io: Io): Context {
  let env: Env | undefined;
  const context: Context = {
    print: (text) => void io.stdout.write(text),
    warn: (text) => void io.stderr.write(`warning: ${text}\n`),
    tell: (text) => void (canAsk(stdin()) && io.stderr.write(`${text}\n`)),
    printsToTerminal: () => io.stdout.isTTY === true,
    env: () => (env ??= parseEnv(io.env)),
    loginFile: () => loginFile(context.env().XDG_CONFIG_HOME, io.configDir),
    readSecret: (prompt, options) => readSecret(stdin(), io.stderr, prompt, options),
    canAsk: () => canAsk(stdin()),
    confirm: (question) => confirm(stdin(), io.stderr, question),
    async connect() {
      const { FLOWPLANE_TOKEN, FLOWPLANE_URL } = context.env();
      // With both variables set, the stored login does not matter, even if it is unreadable.
      const stored =
        FLOWPLANE_TOKEN && FLOWPLANE_URL ? undefined : await readLogin(context.loginFile());
      const token = FLOWPLANE_TOKEN ?? stored?.token;
      if (!token) {
        throw new CliError(
          "not logged in: run `flowplane login --username <name>` (or `--token-file <path>`), or set FLOWPLANE_TOKEN",
          "not_logged_in",
        );
      }
      const url = FLOWPLANE_URL ?? stored?.url ?? DEFAULT_URL;
      // `login` identified the stored URL before its token went there; a token or a URL from
      // the environment is another pair, asked about first (a token never goes unidentified).
      if (token !== stored?.token || url !== stored?.url) {
        await checkFlowplane(url, FLOWPLANE_URL ? "FLOWPLANE_URL" : "flowplane login --url");
      }
      const source: TokenSource = FLOWPLANE_TOKEN
        ? { kind: "environment" }
        : { kind: "login", file: context.loginFile(), expiresAt: stored?.expiresAt };
      return {
        client: createClient({ url, token }, source),
        url,
        token,
        source,
        ...(!FLOWPLANE_TOKEN && stored && { login: stored }),
      };
    },
  };
  const stdin = () => io.stdin ?? Readable.from([]);
  return context;
}

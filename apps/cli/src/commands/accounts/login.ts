// `flowplane login`: a token is stored only after the server has accepted it. With --token-file,
// --token-stdin or --token it is the user's own token (--token, on the command line, with a
// warning: process listings, shell history and CI logs, which `pnpm` echoes a script's line to,
// show it). Before any credential is sent, the URL is checked to be a Flowplane platform. With --username the CLI signs in with the password (asked for, never an
// argument), has that session create a personal access token for the CLI, signs the session out,
// and stores the token with its id, so that `logout` revokes it, and its expiry.
import type { CreatedToken, User } from "@flowplane/contract";
import { type Command, Option } from "commander";
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { createClient, type TokenSource } from "../../client";
import { DEFAULT_URL, type Login, readLogin, writeLogin } from "../../config";
import type { Context } from "../../context";
import { CliError } from "../../errors";
import { checkFlowplane } from "../../identify";
import { json, when } from "../../output";
import { tokenBySignIn } from "../../session";
import { withExamples } from "../examples";
import { revokeIssuedToken } from "./logout";
import { expiry, serverUrl, withJson } from "../options";

interface LoginOptions {
  token?: string;
  tokenFile?: string;
  tokenStdin?: boolean;
  username?: string;
  url?: string;
  adminOptIn: boolean;
  expiresAt?: number | string;
  json?: boolean;
}

export function addLoginCommand(program: Command, context: Context): void {
  withJson(
    withExamples(program.command("login"), [
      {
        does: "Sign in with your password (asked for, not echoed); the CLI gets a token of its own",
        run: "login --username alice --url https://flowplane.example.com",
      },
      {
        does: "The same on a shared machine: the CLI's token stops working at the end of the day",
        run: "login --username alice --expires-at 2027-01-31T18:00Z",
      },
      {
        does: "Check a token (read from a file) with the server, then store it and the server's URL",
        run: "login --token-file ./token --url https://flowplane.example.com",
      },
      {
        does: "The same with the token piped in on stdin (or typed, not echoed, at a terminal)",
        run: "login --token-stdin --url https://flowplane.example.com",
      },
    ])
      .summary("Sign in with a password, or check a token, and store the login")
      .description(
        "Store a login for the other commands: a token and the server's URL.\n\n" +
          "--username signs in with your password, asked for on the terminal without echo (or " +
          "read from the first line of stdin when it is not a terminal). The signed-in session " +
          "creates a personal access token for this CLI and is then signed out; the token " +
          "does not expire (unless --expires-at), and `flowplane logout` revokes it (as does the " +
          "next `login --username`). An administrator's token carries admin opt-in, as a " +
          "signed-in browser does, unless --no-admin-opt-in.\n\n" +
          "--token-file and --token-stdin check a personal access token you already have with " +
          "the server, and store it. --token <token> does the same, but puts the token on the " +
          "command line, where other users' process listings, your shell's history and CI logs " +
          "see it: it is discouraged, and warned about.\n\n" +
          "Before any token or password is sent, GET <url>/healthz must answer as a Flowplane " +
          "platform: whatever else listens there gets nothing.",
      )
      .addOption(
        new Option(
          "--token-file <path>",
          "a personal access token, the first line of this file",
        ).conflicts(["username", "token", "tokenStdin"]),
      )
      .addOption(
        new Option(
          "--token-stdin",
          "a personal access token, read from stdin (asked for without echo at a terminal)",
        ).conflicts(["username", "token"]),
      )
      .addOption(
        new Option(
          "--token <token>",
          "a personal access token on the command line (discouraged: --token-file, --token-stdin)",
        ).conflicts("username"),
      )
      .option("--username <name>", "sign in as this user (or email) with a password")
      .option(
        "--no-admin-opt-in",
        "with --username: a token with ordinary rights, for an administrator",
      )
      .option(
        "--expires-at <time>",
        "with --username: when the CLI's token stops working: ISO-8601 or epoch ms (default: never)",
        expiry,
      )
      .option(
        "--url <url>",
        `the server (default: FLOWPLANE_URL, else the stored URL, else ${DEFAULT_URL})`,
        serverUrl,
      ),
  ).action(async (options: LoginOptions, command: Command) => {
    const byToken =
      options.token !== undefined || options.tokenFile !== undefined || options.tokenStdin === true;
    if (!byToken && options.username === undefined) {
      command.error(
        "error: give --username <name> (a password is asked for), --token-file <path> or --token-stdin",
        { exitCode: 2 },
      );
    }
    if (byToken && (!options.adminOptIn || options.expiresAt !== undefined)) {
      command.error(
        "error: --no-admin-opt-in and --expires-at go with --username: a token's scope is its own",
        { exitCode: 2 },
      );
    }
    const env = context.env();
    const path = context.loginFile();
    // An unreadable old login is about to be replaced, so it is no reason to stop.
    const stored = await readLogin(path).catch(() => undefined);
    const url = options.url ?? env.FLOWPLANE_URL ?? stored?.url ?? DEFAULT_URL;
    if (options.token !== undefined) {
      context.warn(
        "--token puts the token on the command line, where process listings, shell history and " +
          "CI logs show it: use --token-file <path> or --token-stdin",
      );
    }
    // Nothing secret goes to a URL before it has answered as Flowplane.
    await checkFlowplane(url);

    let login: Login;
    let user: User;
    let issued: CreatedToken | undefined;
    if (options.username !== undefined) {
      ({ user, issued } = await tokenBySignIn(context, {
        url,
        username: options.username,
        request: (user) => ({
          name: `flowplane CLI on ${hostname()}`.slice(0, 128).trim(),
          ...(user.admin && options.adminOptIn ? { adminOptIn: true } : {}),
          ...(options.expiresAt !== undefined && { expiresAt: options.expiresAt }),
        }),
        again: `flowplane login --username ${options.username}`,
      }));
      login = { url, token: issued.token, tokenId: issued.id, expiresAt: issued.expiresAt };
    } else {
      const { token, source } = await givenToken(context, options, url);
      login = { url, token };
      user = await createClient(login, source).user.me.query();
    }
    await writeLogin(path, login).catch(async (error: unknown) => {
      // A token nobody holds: revoke what this login created rather than leave it to expire.
      if (login.tokenId !== undefined) {
        await revokeIssuedToken({ ...login, tokenId: login.tokenId }, path).catch(() => undefined);
      }
      throw error;
    });

    context.print(
      options.json
        ? json(user)
        : `Logged in to ${login.url} as ${user.username} (${user.name}).\n` +
            (issued
              ? `Created token ${issued.name} (id ${issued.id}) for this CLI, ` +
                `expires: ${when(issued.expiresAt)}; \`flowplane logout\` revokes it.\n`
              : "") +
            `Stored in ${path}.\n`,
    );
    if (env.FLOWPLANE_TOKEN) {
      context.warn("FLOWPLANE_TOKEN is set; it overrides the stored token while it is");
    }
    if (env.FLOWPLANE_URL && env.FLOWPLANE_URL !== login.url) {
      context.warn("FLOWPLANE_URL is set; it overrides the stored URL while it is");
    }
    await retire(context, stored, login, path);
  });
}

/** The token given to --token, --token-file or --token-stdin, and which one it was. */
async function givenToken(
  context: Context,
  options: LoginOptions,
  url: string,
): Promise<{ token: string; source: TokenSource }> {
  if (options.token !== undefined) {
    return { token: options.token, source: { kind: "argument", option: "--token" } };
  }
  if (options.tokenFile !== undefined) {
    const path = options.tokenFile;
    const text = await readFile(path, "utf8").catch((error: unknown) => {
      throw new CliError(
        `cannot read the token file ${path}: ${(error as Error).message}`,
        "token_file_unreadable",
      );
    });
    const token = text.split(/\r?\n/, 1)[0]!.trim();
    if (token === "") throw new CliError(`the token file ${path} is empty`, "token_required");
    return { token, source: { kind: "argument", option: "--token-file" } };
  }
  const token = await context.readSecret(`Token for ${url}: `).catch((error: unknown) => {
    if (error instanceof CliError && error.code === "password_required") {
      throw new CliError(
        "no token on stdin: pipe it in as the first line, run on a terminal to be asked, or use --token-file <path>",
        "token_required",
      );
    }
    throw error;
  });
  return { token: token.trim(), source: { kind: "argument", option: "--token-stdin" } };
}

/**
 * A token that a previous `login --username` created is revoked when `login --username` replaces
 * it, as `logout` would. Not for `login --token`: the token given may have been created with the
 * previous one, and would be revoked with it.
 */
async function retire(
  context: Context,
  previous: Login | undefined,
  next: Login,
  path: string,
): Promise<void> {
  const tokenId = previous?.tokenId;
  if (!previous || tokenId === undefined || previous.token === next.token) return;
  const advice = `revoke it with \`flowplane tokens revoke ${tokenId}\` (on ${previous.url})`;
  if (next.tokenId === undefined) {
    context.warn(`the token the previous login created (id ${tokenId}) still works; ${advice}`);
    return;
  }
  await revokeIssuedToken({ ...previous, tokenId }, path).catch((error: unknown) => {
    context.warn(
      `the token the previous login created (id ${tokenId}) could not be revoked: ` +
        `${(error as Error).message}; ${advice}`,
    );
  });
}

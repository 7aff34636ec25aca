// `flowplane login`: a token is stored only after the server has accepted it.
import type { Command } from "commander";
import { createClient } from "../client";
import { DEFAULT_URL, readLogin, writeLogin } from "../config";
import type { Context } from "../context";
import { json } from "../output";
import { withExamples } from "./examples";
import { serverUrl, withJson } from "./options";

export function addLoginCommand(program: Command, context: Context): void {
  withJson(
    withExamples(program.command("login"), [
      {
        does: "Check a token with the server, then store it and the server's URL",
        run: "login --token <token> --url https://flowplane.example.com",
      },
    ])
      .description("Check a personal access token with the server, then store it and the URL")
      .requiredOption("--token <token>", "a personal access token")
      .option(
        "--url <url>",
        `the server (default: FLOWPLANE_URL, else the stored URL, else ${DEFAULT_URL})`,
        serverUrl,
      ),
  ).action(async (options: { token: string; url?: string; json?: boolean }) => {
    const env = context.env();
    const path = context.loginFile();
    // An unreadable old login is about to be replaced, so it is no reason to stop.
    const stored = await readLogin(path).catch(() => undefined);
    const login = {
      url: options.url ?? env.FLOWPLANE_URL ?? stored?.url ?? DEFAULT_URL,
      token: options.token,
    };

    const user = await createClient(login).user.me.query();
    await writeLogin(path, login);

    context.print(
      options.json
        ? json(user)
        : `Logged in to ${login.url} as ${user.username} (${user.name}).\nStored in ${path}.\n`,
    );
    if (env.FLOWPLANE_TOKEN) {
      context.warn("FLOWPLANE_TOKEN is set; it overrides the stored token while it is");
    }
    if (env.FLOWPLANE_URL && env.FLOWPLANE_URL !== login.url) {
      context.warn("FLOWPLANE_URL is set; it overrides the stored URL while it is");
    }
  });
}

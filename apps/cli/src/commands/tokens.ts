// `flowplane tokens`: the caller's personal access tokens. A token's value is shown once, when it
// is created; nothing else ever prints one.
import type { TokenSummary } from "@flowplane/contract";
import type { Command } from "commander";
import type { Context } from "../context";
import { type Column, json, table, when } from "../output";
import { withExamples } from "./examples";
import { collect, expiry, withJson } from "./options";

const TOKEN_COLUMNS: Column<TokenSummary>[] = [
  { header: "ID", value: (token) => token.id },
  { header: "NAME", value: (token) => token.name },
  { header: "ACCESS", value: access },
  { header: "TEAMS", value: teams },
  { header: "EXPIRES", value: (token) => when(token.expiresAt) },
  { header: "LAST USED", value: (token) => when(token.lastUsedAt) },
];

function access(token: TokenSummary): string {
  const rights = token.readOnly ? "read-only" : "read-write";
  return token.adminOptIn ? `${rights}, admin opt-in` : rights;
}

function teams(token: TokenSummary): string {
  return token.teams.length === 0 ? "all" : token.teams.map((team) => team.name).join(", ");
}

interface CreateOptions {
  readOnly?: boolean;
  expiresAt?: number | string;
  team?: string[];
  adminOptIn?: boolean;
  json?: boolean;
}

export function addTokensCommands(program: Command, context: Context): void {
  const tokens = program
    .command("tokens")
    .description("List, create and revoke your personal access tokens");

  withJson(
    withExamples(tokens.command("list"), [
      { does: "List your tokens, with their scope, expiry and last use", run: "tokens list" },
    ]).description("Your tokens (never their values)"),
  ).action(async (options: { json?: boolean }) => {
    const { client } = await context.connect();
    const list = await client.token.all.query();
    context.print(options.json ? json(list) : table(list.tokens, TOKEN_COLUMNS));
  });

  withJson(
    withExamples(tokens.command("create"), [
      { does: "Create a token with the scope of the one in use", run: "tokens create laptop" },
      {
        does: "Create a read-only token for CI, restricted to one team, that expires",
        run: "tokens create ci --read-only --team <teamId> --expires-at 2027-01-31T18:00Z",
      },
    ])
      .description(
        "Create a token no broader than the one in use; absent options inherit its scope",
      )
      .argument("<name>", "what the token is for")
      .option("--read-only", "refuse every write")
      .option("--expires-at <time>", "when it stops working: ISO-8601 or epoch ms", expiry)
      .option("--team <id>", "restrict it to this team (repeat for more)", collect)
      .option("--admin-opt-in", "carry your administrator rights (administrators only)"),
  ).action(async (name: string, options: CreateOptions) => {
    const { client } = await context.connect();
    const created = await client.token.create.mutate({
      name,
      readOnly: options.readOnly,
      expiresAt: options.expiresAt,
      teamIds: options.team,
      adminOptIn: options.adminOptIn,
    });
    context.print(
      options.json
        ? json(created)
        : `Created token ${created.name} (id ${created.id}): ${access(created)}, ` +
            `teams: ${teams(created)}, expires: ${when(created.expiresAt)}.\n\n` +
            `    ${created.token}\n\n`,
    );
    context.warn("copy the token now: it will not be shown again");
  });

  withJson(
    withExamples(tokens.command("revoke"), [
      { does: "Revoke a token and every token created with it", run: "tokens revoke <tokenId>" },
    ])
      .description("Revoke a token, and every token created with it")
      .argument("<id>", "the token's id (see `flowplane tokens list`)"),
  ).action(async (id: string, options: { json?: boolean }) => {
    const { client } = await context.connect();
    await client.token.delete.mutate({ id });
    // The API answers 204, so a script has only the exit status to go by.
    if (!options.json) context.print(`Revoked token ${id} and any tokens created with it.\n`);
  });
}

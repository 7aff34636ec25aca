// `flowplane tokens`: the caller's personal access tokens. A token's value is shown once, when it
// is created; nothing else ever prints one.
//
// A token created with another token is that token's child: revoking the parent revokes it. So a
// token made with the CLI's own token (the one `login --username` created) would die with
// `flowplane logout`, and a CI job holding it would break when a person logs out. A token a person
// makes to hand on is theirs: with the CLI's own token, `tokens create` signs in with the password
// (asked for, as `login --username` does) and has that session create the token, which then
// belongs to no other token (`--no-sign-in` makes a child instead). With a token the user gave
// (FLOWPLANE_TOKEN, `login --token`), the token is that one's child, which the output says.
import type { CreatedToken, TokenSummary } from "@flowplane/contract";
import type { Command } from "commander";
import type { Context } from "../context";
import { type Column, json, table, when } from "../output";
import { type TokenRequest, tokenBySignIn } from "../session";
import { withExamples } from "./examples";
import { resolveTeam, resolveToken } from "../resolve";
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
  /** Sign in to create it (a token of its own), or not (a child of the token in use). */
  signIn?: boolean;
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
      {
        does: "Create a token for a CI job; it keeps working after `flowplane logout`",
        run: "tokens create ci",
      },
      {
        does: "A read-only token for CI, restricted to one team, that expires",
        run: "tokens create ci --read-only --team night --expires-at 2027-01-31T18:00Z",
      },
      {
        does: "From a script: the password piped in as the first line of stdin",
        run: "tokens create deploy --team night",
      },
      {
        does: "A token that `flowplane logout` revokes with the CLI's own (no password asked)",
        run: "tokens create scratch --no-sign-in",
      },
    ])
      .summary("Create a token; shown once")
      .description(
        "Create a personal access token; its value is shown this once.\n\n" +
          "Logged in with `login --username`, the CLI signs in with your password (asked for " +
          "without echo, or read from the first line of stdin when it is not a terminal) and " +
          "the sign-in creates the token: it is yours alone, and `flowplane logout` does not " +
          "revoke it. With --no-sign-in, or with a token of your own (FLOWPLANE_TOKEN, " +
          "`login --token`), the token in use creates it: it is no broader than that token, " +
          "and is revoked with it. Absent options inherit the teams and expiry of what creates it " +
          "(a sign-in: every team, no expiry).",
      )
      .argument("<name>", "what the token is for")
      .option("--read-only", "refuse every write")
      .option("--expires-at <time>", "when it stops working: ISO-8601 or epoch ms", expiry)
      .option(
        "--team <team>",
        "restrict it to this team, by id, slug or name (repeat for more)",
        collect,
      )
      .option("--admin-opt-in", "carry your administrator rights (administrators only)")
      .option("--sign-in", "sign in with your password to create it, whatever token is in use")
      .option("--no-sign-in", "create it with the token in use, which revokes it when revoked"),
  ).action(async (name: string, options: CreateOptions) => {
    const { client, url, source, login } = await context.connect();
    const request: TokenRequest = {
      name,
      readOnly: options.readOnly,
      expiresAt: options.expiresAt,
      teamIds:
        options.team &&
        (await Promise.all(options.team.map(async (t) => (await resolveTeam(client, t)).id))),
      adminOptIn: options.adminOptIn,
    };
    const cliToken = source.kind === "login" ? login?.tokenId : undefined;
    let created: CreatedToken;
    let parent: string | undefined;
    if (options.signIn ?? cliToken !== undefined) {
      const { username } = await client.user.me.query();
      ({ issued: created } = await tokenBySignIn(context, {
        url,
        username,
        request,
        again: `flowplane tokens create ${name}`,
        ...(cliToken === undefined
          ? {
              why: "The token is created through a sign-in with your password: it belongs to no other token.",
            }
          : {
              why:
                "The token is created through a sign-in with your password, so that it is yours " +
                "alone: `flowplane logout` does not revoke it (--no-sign-in: no password, but it does).",
              noPassword:
                "the token is created through a sign-in so that `flowplane logout` does not revoke " +
                "it; --no-sign-in creates it with the CLI's token instead, and logout revokes it too",
            }),
      }));
    } else {
      created = await client.token.create.mutate(request);
      parent =
        source.kind === "environment"
          ? "the token in FLOWPLANE_TOKEN"
          : cliToken !== undefined
            ? `the CLI's own token (id ${cliToken}), which \`flowplane logout\` revokes`
            : "the token of the stored login";
    }
    context.print(
      options.json
        ? json(created)
        : `Created token ${created.name} (id ${created.id}): ${access(created)}, ` +
            `teams: ${teams(created)}, expires: ${when(created.expiresAt)}.\n\n` +
            `    ${created.token}\n\n` +
            (parent === undefined
              ? "It is yours alone: `flowplane logout` does not revoke it; " +
                `\`flowplane tokens revoke ${created.id}\` does.\n`
              : ""),
    );
    context.warn("copy the token now: it will not be shown again");
    if (parent !== undefined) {
      context.warn(`it was created with ${parent}: revoking that token revokes this one too`);
    }
  });

  withJson(
    withExamples(tokens.command("revoke"), [
      { does: "Revoke a token and every token created with it", run: "tokens revoke ci" },
    ])
      .description("Revoke a token, and every token created with it")
      .argument("<token>", "the token's id or name (see `flowplane tokens list`)"),
  ).action(async (given: string, options: { json?: boolean }) => {
    const { client } = await context.connect();
    const token = await resolveToken(client, given);
    await client.token.delete.mutate({ id: token.id });
    // The API answers 204, so a script has only the exit status to go by.
    if (!options.json) {
      context.print(
        `Revoked token ${token.name} (id ${token.id}) and any tokens created with it.\n`,
      );
    }
  });
}

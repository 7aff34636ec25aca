// `flowplane users`: the platform's users, as administrators manage them (an administrator's token
// with admin opt-in). A user is named by username or id. A new user's password is asked for (or
// read from stdin), never taken as an argument, and never printed.
import { type User } from "@flowplane/contract";
import type { Command } from "commander";
import { asAdministrator } from "../../client";
import type { Context } from "../../context";
import { type Column, json, when } from "../../output";
import { withExamples } from "../examples";
import { positiveInteger, withJson } from "../options";
import { resolveUser, USER_ADMINISTRATION } from "../../resolve";
import { listPages } from "../pages";

const USER_COLUMNS: Column<User>[] = [
  { header: "USERNAME", value: (user) => user.username },
  { header: "NAME", value: (user) => user.name },
  { header: "EMAIL", value: (user) => user.email ?? "-" },
  { header: "ADMIN", value: (user) => (user.admin ? "yes" : "no") },
  { header: "SUSPENDED", value: (user) => (user.suspended ? "yes" : "no") },
  { header: "CREATED", value: (user) => when(user.createdAt) },
  { header: "ID", value: (user) => user.id },
];

interface ListOptions {
  query?: string;
  limit?: number;
  cursor?: string;
  all?: boolean;
  json?: boolean;
}

interface CreateOptions {
  name: string;
  email?: string;
  admin?: boolean;
  json?: boolean;
}

const USER_ARGUMENT = "the user's username, or id";

export function addUsersCommands(program: Command, context: Context): void {
  const users = program
    .command("users")
    .description("List, create, suspend and delete users (administrators)");

  withJson(
    withExamples(users.command("list"), [
      { does: "List the first 100 users, oldest first", run: "users list" },
      {
        does: "Find users whose username, name or email contains a text",
        run: "users list --query example.com",
      },
      {
        does: "Every user, following the pages, as JSON",
        run: "users list --all --limit 500 --json",
      },
    ])
      .description("The platform's users, oldest first, a page at a time")
      .option("--query <text>", "only those whose username, name or email contains it (any case)")
      .option("--limit <n>", "users per page (default 100)", positiveInteger)
      .option("--cursor <cursor>", "the page after this cursor (printed under a page)")
      .option("--all", "every page, not only the first"),
  ).action(async (options: ListOptions) => {
    const { client } = await context.connect();
    await listPages(
      context,
      "users",
      (cursor) =>
        asAdministratorOfUsers(
          client.users.all.query({ query: options.query, limit: options.limit, cursor }),
        ),
      options,
      { columns: USER_COLUMNS, none: "No users.\n", what: "users", all: true },
    );
  });

  withJson(
    withExamples(users.command("create"), [
      {
        does: "Create a user; their password is asked for twice, without echo",
        run: 'users create alice --name "Alice Liddell" --email alice@example.com',
      },
      {
        does: "Create a platform administrator",
        run: 'users create ops --name "Operations" --admin',
      },
    ])
      .summary("Create a user, asking for their password")
      .description(
        "Create a user. Their password is asked for on the terminal without echo (twice), or " +
          "read from the first line of stdin when it is not a terminal; never an argument.",
      )
      .argument("<username>", "lower-case letters, digits, '-' and '_'")
      .requiredOption("--name <name>", "their full name")
      .option(
        "--email <email>",
        "their email address (sign-in accepts it in place of the username)",
      )
      .option("--admin", "make them a platform administrator"),
  ).action(async (username: string, options: CreateOptions) => {
    const { client } = await context.connect();
    const password = await context.readSecret(`Password for the new user ${username}: `, {
      confirm: "The same password again: ",
    });
    const user = await asAdministratorOfUsers(
      client.users.create.mutate({
        username,
        name: options.name,
        email: options.email,
        password,
        isAdmin: options.admin,
      }),
    );
    context.print(
      options.json
        ? json(user)
        : `Created user ${user.username} (${user.name}, id ${user.id})` +
            `${user.admin ? ", a platform administrator" : ""}.\n`,
    );
  });

  withJson(
    withExamples(users.command("suspend"), [
      { does: "Suspend a user: no sign-in, and their tokens fail", run: "users suspend alice" },
    ])
      .description("Suspend a user: they cannot sign in, their sessions end, their tokens fail")
      .argument("<user>", USER_ARGUMENT),
  ).action(async (name: string, options: { json?: boolean }) => {
    const { client } = await context.connect();
    const found = await resolveUser(client, name);
    const user = await asAdministratorOfUsers(
      client.users.update.mutate({ userId: found.id, suspended: true }),
    );
    context.print(
      options.json
        ? json(user)
        : `Suspended ${user.username} (id ${user.id}): they cannot sign in and their tokens ` +
            `fail until \`flowplane users unsuspend ${user.username}\`.\n`,
    );
  });

  withJson(
    withExamples(users.command("unsuspend"), [
      { does: "Lift a suspension: their tokens work again", run: "users unsuspend alice" },
    ])
      .description("Lift a user's suspension: they can sign in, and their tokens work again")
      .argument("<user>", USER_ARGUMENT),
  ).action(async (name: string, options: { json?: boolean }) => {
    const { client } = await context.connect();
    const found = await resolveUser(client, name);
    const user = await asAdministratorOfUsers(
      client.users.update.mutate({ userId: found.id, suspended: false }),
    );
    context.print(
      options.json
        ? json(user)
        : `Unsuspended ${user.username} (id ${user.id}): they can sign in again.\n`,
    );
  });

  withJson(
    withExamples(users.command("delete"), [
      { does: "Delete a user, by username or id", run: "users delete alice" },
    ])
      .summary("Delete a user")
      .description(
        "Delete a user, with their tokens and sessions, and the teams they own alone (refused " +
          "while such a team has other members). It cannot be undone, and is not confirmed.",
      )
      .argument("<user>", USER_ARGUMENT),
  ).action(async (name: string, options: { json?: boolean }) => {
    const { client } = await context.connect();
    const found = await resolveUser(client, name);
    const status = await asAdministratorOfUsers(client.users.delete.mutate({ userId: found.id }));
    context.print(
      options.json
        ? json(status)
        : `Deleted user ${found.username} (id ${found.id}), with their tokens and the teams ` +
            "they owned alone.\n",
    );
  });
}

/** A users' request: its refusal says that it takes an administrator. */
function asAdministratorOfUsers<T>(request: Promise<T>): Promise<T> {
  return asAdministrator(request, USER_ADMINISTRATION);
}

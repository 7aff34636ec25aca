// `flowplane broker`: a team's MQTT clients (username, password, ACLs) and, for administrators,
// the tokens an external broker calls the platform with. A client's password is asked for (or read
// from stdin), never an argument; a broker token's value is shown once, when it is created.
import type { BrokerAcl, BrokerClient, BrokerToken } from "@flowplane/contract";
import { type Command, InvalidArgumentError } from "commander";
import type { Client } from "../client";
import type { Context } from "../context";
import { type Column, fields, json, table, when } from "../output";
import { withExamples } from "./examples";
import { printEvery } from "./pages";
import { teamCommand, withJson } from "./options";
import { listEvery, resolveBrokerClient, resolveBrokerToken, resolveTeam } from "../resolve";

const ACTIONS = ["subscribe", "publish", "both"] as const;

/** `both:sensors/#`: an action, a colon, then an MQTT topic filter (which the API validates). */
export function acl(value: string): BrokerAcl {
  const colon = value.indexOf(":");
  const action = value.slice(0, colon) as BrokerAcl["action"];
  if (colon < 0 || !ACTIONS.includes(action) || colon === value.length - 1) {
    throw new InvalidArgumentError(
      "Not an ACL: give <action>:<topic filter>, the action subscribe, publish or both " +
        "(e.g. both:sensors/#).",
    );
  }
  return { action, pattern: value.slice(colon + 1) };
}

const acls = (client: BrokerClient) =>
  client.acls.map((entry) => `${entry.action}:${entry.pattern}`).join(", ");

const CLIENT_COLUMNS: Column<BrokerClient>[] = [
  { header: "USERNAME", value: (client) => client.username },
  { header: "ACLS", value: acls },
  { header: "UPDATED", value: (client) => when(client.updatedAt) },
];

const TOKEN_COLUMNS: Column<BrokerToken>[] = [
  { header: "ID", value: (token) => token.id },
  { header: "NAME", value: (token) => token.name },
  { header: "CREATED", value: (token) => when(token.createdAt) },
  { header: "LAST USED", value: (token) => when(token.lastUsedAt) },
];

/** How the client connects: MQTT username and client id, and where (when the platform says). */
async function connection(
  client: Client,
  teamId: string,
  username: string,
): Promise<[string, string][]> {
  const url: unknown = (await client.settings.get.query())["team:broker:url"];
  return [
    ["MQTT username", `${username}@${teamId}`],
    ["MQTT client id", `${username}@${teamId}`],
    ["Broker", typeof url === "string" ? url : "none on this platform"],
  ];
}

interface ClientOptions {
  team: string;
  acl?: BrokerAcl[];
  password?: boolean;
  json?: boolean;
}

export function addBrokerCommands(program: Command, context: Context): void {
  const broker = program
    .command("broker")
    .description("The team broker: a team's MQTT clients, and tokens for an external broker");
  /** The team, and its MQTT client, that a command line names. */
  async function named(given: string, options: { team: string }) {
    const { client } = await context.connect();
    const team = await resolveTeam(client, options.team);
    const { name: username } = await resolveBrokerClient(client, team, given);
    return { client, teamId: team.id, username };
  }

  const clients = broker
    .command("clients")
    .description("List, create, change and delete a team's MQTT clients");

  teamCommand(
    clients,
    "list",
    [
      {
        does: "List a team's MQTT clients and their ACLs",
        run: "broker clients list --team night",
      },
    ],
    (command) => command.description("A team's MQTT clients and their ACLs (viewers and up)"),
  ).action(async (options: { team: string; json?: boolean }) => {
    const { client } = await context.connect();
    const teamId = (await resolveTeam(client, options.team)).id;
    const all = await listEvery("clients", (cursor) =>
      client.broker.listClients.query({ teamId, cursor }),
    );
    printEvery(
      context,
      "clients",
      all,
      { columns: CLIENT_COLUMNS, none: "No MQTT clients in this team.\n" },
      options.json,
    );
  });

  teamCommand(
    clients,
    "show",
    [
      {
        does: "Show a client's ACLs and how it connects",
        run: "broker clients show sensor-1 --team night",
      },
    ],
    (command) =>
      command
        .description("One MQTT client: its ACLs and how it connects (viewers and up)")
        .argument("<client>", "the client's username or id"),
  ).action(async (given: string, options: { team: string; json?: boolean }) => {
    const { client, teamId, username } = await named(given, options);
    const found = await client.broker.getClient.query({ teamId, username });
    if (options.json) return context.print(json(found));
    context.print(
      fields([
        ["Username", found.username],
        ["ACLs", acls(found)],
        ["Created", when(found.createdAt)],
        ["Updated", when(found.updatedAt)],
        ...(await connection(client, teamId, found.username)),
      ]),
    );
  });

  teamCommand(
    clients,
    "create",
    [
      {
        does: "Create a client that reads sensors/ and writes commands/; its password is asked for",
        run: "broker clients create sensor-1 --acl subscribe:sensors/# --acl publish:commands/+ --team night",
      },
      {
        does: "From a script, with the password piped in as the first line of stdin",
        run: "broker clients create sensor-1 --acl both:# --team <teamId>",
      },
    ],
    (command) =>
      command
        .summary("Create an MQTT client (owners), asking for its password")
        .description(
          "Create an MQTT client (owners). Its password (8 characters or more) is asked for on the " +
            "terminal without echo (twice), or read from the first line of stdin when it is not a " +
            "terminal; never an argument.",
        )
        .argument("<username>", "letters, digits, '.', '-' and '_' (64 at most)")
        .requiredOption(
          "--acl <action:pattern>",
          "what it may do: subscribe, publish or both, a colon, an MQTT topic filter (repeat for more)",
          (value: string, previous: BrokerAcl[] = []) => [...previous, acl(value)],
        ),
  ).action(async (username: string, options: ClientOptions) => {
    const { client } = await context.connect();
    const teamId = (await resolveTeam(client, options.team)).id;
    const password = await context.readSecret(`Password for the MQTT client ${username}: `, {
      confirm: "The same password again: ",
    });
    const created = await client.broker.createClient.mutate({
      teamId,
      username,
      password,
      acls: options.acl!,
    });
    if (options.json) return context.print(json(created));
    context.print(
      `Created MQTT client ${created.username} (${acls(created)}).\n` +
        fields(await connection(client, teamId, created.username)),
    );
  });

  teamCommand(
    clients,
    "update",
    [
      {
        does: "Replace a client's ACLs; it is held to them from its next operation",
        run: "broker clients update sensor-1 --acl subscribe:sensors/# --team night",
      },
      {
        does: "Give a client a new password (asked for); its live session ends at once",
        run: "broker clients update sensor-1 --password --team night",
      },
    ],
    (command) =>
      command
        .description("Replace an MQTT client's ACLs and/or password (owners)")
        .argument("<client>", "the client's username or id")
        .option(
          "--acl <action:pattern>",
          "the new ACLs, replacing all the old ones (repeat for more)",
          (value: string, previous: BrokerAcl[] = []) => [...previous, acl(value)],
        )
        .option("--password", "ask for a new password (or read it from stdin)"),
  ).action(async (given: string, options: ClientOptions, command: Command) => {
    if (!options.acl && !options.password) {
      command.error("error: nothing to change: give --acl and/or --password", { exitCode: 2 });
    }
    const { client, teamId, username } = await named(given, options);
    const password = options.password
      ? await context.readSecret(`New password for the MQTT client ${username}: `, {
          confirm: "The same password again: ",
        })
      : undefined;
    const updated = await client.broker.updateClient.mutate({
      teamId,
      username,
      password,
      acls: options.acl,
    });
    context.print(
      options.json
        ? json(updated)
        : `Updated MQTT client ${updated.username} (${acls(updated)})` +
            `${password === undefined ? "" : "; its live session, if any, was ended"}.\n`,
    );
  });

  teamCommand(
    clients,
    "delete",
    [
      {
        does: "Delete a client and end its live session",
        run: "broker clients delete sensor-1 --team night",
      },
    ],
    (command) =>
      command
        .description("Delete an MQTT client (owners); its live session ends at once")
        .argument("<client>", "the client's username or id"),
  ).action(async (given: string, options: { team: string; json?: boolean }) => {
    const { client, teamId, username } = await named(given, options);
    const result = await client.broker.deleteClient.mutate({ teamId, username });
    context.print(options.json ? json(result) : `Deleted MQTT client ${username}.\n`);
  });

  const tokens = broker
    .command("tokens")
    .description("Tokens an external broker (EMQX) calls the platform with (administrators)");

  withJson(
    withExamples(tokens.command("list"), [
      { does: "List the broker tokens (never their values)", run: "broker tokens list" },
    ]).description("The broker tokens (administrators)"),
  ).action(async (options: { json?: boolean }) => {
    const { client } = await context.connect();
    const list = await client.broker.listTokens.query();
    context.print(options.json ? json(list) : table(list.tokens, TOKEN_COLUMNS));
  });

  withJson(
    withExamples(tokens.command("create"), [
      {
        does: "Create the token EMQX authenticates its HTTP calls with",
        run: "broker tokens create emqx",
      },
    ])
      .description("Create a broker token (administrators); its value is shown once")
      .argument("<name>", "what the token is for"),
  ).action(async (name: string, options: { json?: boolean }) => {
    const { client } = await context.connect();
    const created = await client.broker.createToken.mutate({ name });
    context.print(
      options.json
        ? json(created)
        : `Created broker token ${created.name} (id ${created.id}).\n\n    ${created.token}\n\n`,
    );
    context.warn("copy the token now: it will not be shown again");
  });

  withJson(
    withExamples(tokens.command("delete"), [
      {
        does: "Delete a broker token: the broker's calls with it fail",
        run: "broker tokens delete emqx",
      },
    ])
      .description("Delete a broker token (administrators)")
      .argument("<token>", "the token's id or name (see `flowplane broker tokens list`)"),
  ).action(async (given: string, options: { json?: boolean }) => {
    const { client } = await context.connect();
    const token = await resolveBrokerToken(client, given);
    const result = await client.broker.deleteToken.mutate({ tokenId: token.id });
    context.print(
      options.json ? json(result) : `Deleted broker token ${token.name} (id ${token.id}).\n`,
    );
  });
}

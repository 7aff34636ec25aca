// `flowplane team-types`: the kinds of team the platform offers and the limits their teams live
// within. Everyone may list and read them; administrators (a token with admin opt-in) create,
// change and delete them. A type is named by its id or its name (unique without regard to case).
import type { TeamType, TeamTypeProperties } from "@flowplane/contract";
import { type Command, InvalidArgumentError, Option } from "commander";
import { asAdministrator } from "../../client";
import { listPages } from "../pages";
import type { Context } from "../../context";
import { CliError } from "../../errors";
import { type Column, fields, json, when } from "../../output";
import { withExamples } from "../examples";
import { collect, positiveInteger, withJson } from "../options";
import { resolveTeamType } from "../../resolve";

/** The limits a type sets, each a command-line option, and where it lives in `properties`. */
const LIMITS = [
  {
    option: "users",
    label: "Members",
    header: "MEMBERS",
    what: "members per team (invitations count)",
  },
  {
    option: "instances",
    label: "Instances",
    header: "INSTANCES",
    what: "hosted instances per team",
  },
  { option: "devices", label: "Devices", header: "DEVICES", what: "remote devices per team" },
  {
    option: "broker-clients",
    label: "Broker clients",
    header: "BROKER CLIENTS",
    what: "MQTT clients of the team's broker",
  },
] as const;
type LimitName = (typeof LIMITS)[number]["option"];

function limitOf(properties: TeamTypeProperties, name: LimitName): number | null | undefined {
  return name === "broker-clients" ? properties.teamBroker?.clients.limit : properties[name]?.limit;
}

function withLimit(
  properties: TeamTypeProperties,
  name: LimitName,
  limit: number | null,
): TeamTypeProperties {
  return name === "broker-clients"
    ? { ...properties, teamBroker: { clients: { limit } } }
    : { ...properties, [name]: { limit } };
}

const shown = (limit: number | null | undefined) => (limit == null ? "no limit" : String(limit));

/**
 * A limit: a whole number, or `none` for no limit (kept as "none" here: commander takes a parser's
 * null for a missing value).
 */
function limit(value: string): number | "none" {
  if (/^(none|unlimited)$/i.test(value)) return "none";
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("Not a limit: a whole number, or none.");
  return Number(value);
}

function order(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("Not an order: a whole number.");
  return Number(value);
}

type FeatureValue = boolean | number | string;

/** `name=value`: true and false are flags, numbers numbers, anything else text. */
function feature(value: string, previous: [string, FeatureValue][] = []): [string, FeatureValue][] {
  const equals = value.indexOf("=");
  if (equals < 1) throw new InvalidArgumentError("Not a feature: give name=value.");
  const text = value.slice(equals + 1);
  const parsed: FeatureValue =
    text === "true"
      ? true
      : text === "false"
        ? false
        : text !== "" && Number.isFinite(Number(text))
          ? Number(text)
          : text;
  return [...previous, [value.slice(0, equals), parsed]];
}

const features = (type: TeamType) =>
  Object.entries(type.properties.features ?? {})
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(", ") || "none";

const TYPE_COLUMNS: Column<TeamType>[] = [
  { header: "NAME", value: (type) => type.name },
  { header: "ACTIVE", value: (type) => (type.active ? "yes" : "no") },
  { header: "ORDER", value: (type) => String(type.order) },
  ...LIMITS.map(({ option, header }) => ({
    header,
    value: (type: TeamType) => shown(limitOf(type.properties, option)),
  })),
  { header: "ID", value: (type) => type.id },
];

function describe(type: TeamType): string {
  return fields([
    ["Name", type.name],
    ["ID", type.id],
    ["Active", type.active ? "yes: new teams may choose it" : "no: new teams may not choose it"],
    ["Order", String(type.order)],
    ["Description", type.description ?? "-"],
    ...LIMITS.map(({ option, label }) => [label, shown(limitOf(type.properties, option))] as const),
    ["Features", features(type)],
    ["Created", when(type.createdAt)],
    ["Updated", when(type.updatedAt)],
  ]);
}

interface ChangeOptions {
  description?: string | false;
  order?: number;
  active?: boolean;
  inactive?: boolean;
  users?: number | "none";
  instances?: number | "none";
  devices?: number | "none";
  brokerClients?: number | "none";
  feature?: [string, FeatureValue][];
  removeFeature?: string[];
  json?: boolean;
}

/** The options that set a type's fields, shared by `create` and `update`. */
function withChanges(command: Command, { update }: { update: boolean }): Command {
  command.option("--description <text>", "what the type is for");
  if (update) command.option("--no-description", "remove the description");
  command
    .option("--order <n>", `its place in lists, lowest first${update ? "" : " (default 0)"}`, order)
    .addOption(
      new Option(
        "--active",
        update ? "new teams may choose it" : "new teams may choose it (the default)",
      ).conflicts("inactive"),
    )
    .addOption(new Option("--inactive", "new teams may not choose it; its teams keep it"));
  for (const { option, what } of LIMITS) {
    command.option(`--${option} <limit>`, `the most ${what}: a number, or none`, limit);
  }
  command.option(
    "--feature <name=value>",
    "a feature flag or setting: true, false, a number or text (repeat for more)",
    feature,
  );
  if (update) {
    command.option("--remove-feature <name>", "remove a feature (repeat for more)", collect);
  }
  return command;
}

/** The fields the options change: `properties` as a whole, from `current`'s. */
function changes(options: ChangeOptions, current?: TeamTypeProperties) {
  let properties: TeamTypeProperties = { ...current };
  let changed = false;
  for (const { option } of LIMITS) {
    const key = option === "broker-clients" ? "brokerClients" : option;
    const value = options[key];
    if (value !== undefined) {
      properties = withLimit(properties, option, value === "none" ? null : value);
      changed = true;
    }
  }
  if (options.feature || options.removeFeature) {
    const next = { ...properties.features, ...Object.fromEntries(options.feature ?? []) };
    for (const name of options.removeFeature ?? []) {
      if (!(name in next)) throw new CliError(`the type has no feature ${name}`, "not_found");
      delete next[name];
    }
    properties = { ...properties, features: next };
    changed = true;
  }
  const active = options.inactive ? false : options.active;
  return {
    ...(options.description !== undefined && {
      description: options.description === false ? null : options.description,
    }),
    ...(options.order !== undefined && { order: options.order }),
    ...(active !== undefined && { active }),
    ...(changed && { properties }),
  };
}

export function addTeamTypesCommands(program: Command, context: Context): void {
  const types = program
    .command("team-types")
    .description("The kinds of team and their limits (administrators change them)");

  withJson(
    withExamples(types.command("list"), [
      {
        does: "List the team types new teams may choose, with their limits",
        run: "team-types list",
      },
      {
        does: "Every type, inactive ones too, as JSON",
        run: "team-types list --filter all --json",
      },
    ])
      .description("Team types by ascending order, with their limits (anyone)")
      .addOption(
        new Option("--filter <which>", "which types")
          .choices(["active", "inactive", "all"])
          .default("active"),
      )
      .option("--limit <n>", "types per page (default 100)", positiveInteger)
      .option("--cursor <cursor>", "the page after this cursor")
      .option("--all", "every page, not only the first"),
  ).action(
    async (options: {
      filter: "active" | "inactive" | "all";
      limit?: number;
      cursor?: string;
      all?: boolean;
      json?: boolean;
    }) => {
      const { client } = await context.connect();
      await listPages(
        context,
        "types",
        (cursor) =>
          client.teamTypes.all.query({ filter: options.filter, limit: options.limit, cursor }),
        options,
        { columns: TYPE_COLUMNS, none: "No team types.\n", what: "types", all: true },
      );
    },
  );

  withJson(
    withExamples(types.command("show"), [
      { does: "Show a team type's limits and features", run: "team-types show Starter" },
    ])
      .description("One team type: its limits, features and whether new teams may choose it")
      .argument("<type>", "the type's name or id"),
  ).action(async (name: string, options: { json?: boolean }) => {
    const { client } = await context.connect();
    const type = await resolveTeamType(client, name);
    context.print(options.json ? json(type) : describe(type));
  });

  withJson(
    withChanges(
      withExamples(types.command("create"), [
        {
          does: "Create a type whose teams have at most 5 members and 2 instances",
          run: 'team-types create Small --users 5 --instances 2 --description "For trials"',
        },
        {
          does: "Create a type that new teams cannot choose yet, with a feature flag",
          run: "team-types create Enterprise --inactive --order 10 --feature sso=true",
        },
      ])
        .description("Create a team type (administrators); limits absent are no limit")
        .argument("<name>", "unique without regard to case"),
      { update: false },
    ),
  ).action(async (name: string, options: ChangeOptions) => {
    const { client } = await context.connect();
    const type = await asAdministratorOfTeamTypes(
      client.teamTypes.create.mutate({ name, ...changes(options) }),
    );
    context.print(
      options.json
        ? json(type)
        : `Created team type ${type.name} (id ${type.id}).\n${describe(type)}`,
    );
  });

  withJson(
    withChanges(
      withExamples(types.command("update"), [
        {
          does: "Raise a type's member limit; its teams get it at once",
          run: "team-types update Small --users 10",
        },
        {
          does: "Lift a limit, rename the type and stop offering it to new teams",
          run: "team-types update Small --instances none --name Legacy --inactive",
        },
      ])
        .description(
          "Change a team type (administrators): only what the options name; its teams get new " +
            "limits at once",
        )
        .argument("<type>", "the type's name or id")
        .option("--name <name>", "a new name"),
      { update: true },
    ),
  ).action(async (name: string, options: ChangeOptions & { name?: string }, command: Command) => {
    const { client } = await context.connect();
    const type = await resolveTeamType(client, name);
    const change = {
      ...changes(options, type.properties),
      ...(options.name !== undefined && { name: options.name }),
    };
    if (Object.keys(change).length === 0) {
      command.error("error: nothing to change: give an option (see --help)", { exitCode: 2 });
    }
    const updated = await asAdministratorOfTeamTypes(
      client.teamTypes.update.mutate({ teamTypeId: type.id, ...change }),
    );
    context.print(
      options.json ? json(updated) : `Updated team type ${updated.name}.\n${describe(updated)}`,
    );
  });

  withJson(
    withExamples(types.command("delete"), [
      { does: "Delete a team type no team has", run: "team-types delete Legacy" },
    ])
      .description(
        "Delete a team type (administrators): only one no team has, and not the last active one",
      )
      .argument("<type>", "the type's name or id"),
  ).action(async (name: string, options: { json?: boolean }) => {
    const { client } = await context.connect();
    const type = await resolveTeamType(client, name);
    const result = await asAdministratorOfTeamTypes(
      client.teamTypes.delete.mutate({ teamTypeId: type.id }),
    );
    context.print(
      options.json ? json(result) : `Deleted team type ${type.name} (id ${type.id}).\n`,
    );
  });
}

/** A change to the team types: its refusal says that it takes an administrator. */
function asAdministratorOfTeamTypes<T>(request: Promise<T>): Promise<T> {
  return asAdministrator(
    request,
    "team types are changed only with an administrator's token with admin opt-in",
  );
}

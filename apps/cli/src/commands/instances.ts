// `flowplane instances`: the hosted Node-RED instances in a team's applications — created,
// listed, started, stopped, restarted, suspended, deleted (asked first), their log read or
// followed, an editor token made; their environment variables are `instances env`
// (instance-env.ts), the applications `flowplane apps` (apps.ts). An instance or an application
// is named by its id or its name, looked up in the team that --team names, else in all the
// caller's teams (resolve/: a name that several share is refused, listing them).
import type { Instance, InstanceSummary } from "@flowplane/contract";
import { type Command, InvalidArgumentError, Option } from "commander";
import { setTimeout as sleep } from "node:timers/promises";
import type { Context } from "../context";
import { type Column, fields, json, table, when } from "../output";
import { instanceCommand, type InstanceOptions } from "./instance-command";
import { addInstanceEnvCommands } from "./instance-env";
import { positiveInteger, teamCommand, withJson, withYes } from "./options";
import { resolveApplication, resolveInstance, resolveTeam } from "../resolve";
import { confirmOrStop, refuseUnanswerable } from "./ask-first";

const FOLLOW_INTERVAL_MS = 1000;

interface Row {
  application: string;
  instance: InstanceSummary;
  state: string;
}

const INSTANCE_COLUMNS: Column<Row>[] = [
  { header: "ID", value: (row) => row.instance.id },
  { header: "NAME", value: (row) => row.instance.name },
  { header: "APPLICATION", value: (row) => row.application },
  { header: "STATE", value: (row) => row.state },
  { header: "URL", value: (row) => row.instance.url ?? "-" },
];

function describe(instance: Instance): string {
  const own = instance.settings.env.filter((v) => !v.name.startsWith("FF_"));
  return fields([
    ["ID", instance.id],
    ["Name", instance.name],
    ["State", instance.meta.state],
    ["Editor", instance.url ?? "- (none while suspended)"],
    ["Application", `${instance.application.name} (${instance.application.id})`],
    ["Team", `${instance.team.name} (${instance.team.slug})`],
    [
      "Stack",
      `${instance.stack.label ?? instance.stack.name} (Node-RED ${String(instance.stack.properties.nodered ?? "?")})`,
    ],
    [
      "Variables",
      own.length === 0
        ? "none"
        : own.map((v) => (v.hidden ? `${v.name} (hidden)` : `${v.name}=${v.value}`)).join(", "),
    ],
    ["Flows deployed", when(instance.flowLastUpdatedAt, "never")],
  ]);
}

/** `--expires-in`: whole seconds the API accepts for an editor token (60 to 86400). */
function expiresIn(value: string): number {
  const seconds = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(seconds >= 60 && seconds <= 86_400)) {
    throw new InvalidArgumentError("Not a number of seconds from 60 to 86400.");
  }
  return seconds;
}

type Action = "start" | "stop" | "restart" | "suspend";

const ACTIONS: Record<Action, { summary: string; done: string }> = {
  start: { summary: "Start an instance (owners)", done: "is running" },
  stop: { summary: "Stop an instance's Node-RED (owners)", done: "is stopped" },
  restart: {
    summary: "Restart an instance's Node-RED: new variables take effect (owners)",
    done: "restarted",
  },
  suspend: {
    summary: "Suspend an instance: Node-RED stops and gives its address back (owners)",
    done: "is suspended",
  },
};

export function addInstancesCommands(program: Command, context: Context): void {
  const instances = program
    .command("instances")
    .description("Hosted Node-RED instances: create, run, read their logs, set their variables");

  teamCommand(
    instances,
    "list",
    [
      {
        does: "List a team's instances with their state and editor",
        run: "instances list --team night",
      },
    ],
    (command) =>
      command.description("A team's instances, with their state and editor URL (viewers and up)"),
  ).action(async (options: { team: string; json?: boolean }) => {
    const { client } = await context.connect();
    const teamId = (await resolveTeam(client, options.team)).id;
    const [list, status] = await Promise.all([
      client.applications.ofTeam.query({ teamId }),
      client.applications.statusOfTeam.query({ teamId }),
    ]);
    const states = new Map(
      status.applications.flatMap((a) => a.instances.map((i) => [i.id, i.meta.state] as const)),
    );
    const rows = list.applications.flatMap((application) =>
      application.instances.map((instance) => ({
        application: application.name,
        instance,
        state: states.get(instance.id) ?? "unknown",
      })),
    );
    if (options.json) return context.print(json({ count: rows.length, instances: rows }));
    context.print(
      rows.length === 0 ? "No instances in this team.\n" : table(rows, INSTANCE_COLUMNS),
    );
  });

  teamCommand(
    instances,
    "create",
    [
      {
        does: "Create an instance in an application; it starts at once",
        run: "instances create line-one --app <applicationId>",
      },
      {
        does: "The same, naming the application by its name in a team",
        run: 'instances create line-one --app "Line 1" --team night',
      },
    ],
    (command) =>
      command
        .description(
          "Create an instance (owners); the platform's default type, stack and template unless given",
        )
        .argument(
          "<name>",
          "letters, digits and '-', starting with a letter; unique on the platform",
        )
        .requiredOption("--app <application>", "the application's id or name")
        .option("--stack <stackId>", "the stack (the Node-RED version)")
        .option("--type <instanceTypeId>", "the instance type")
        .option("--template <templateId>", "the template of default settings")
        .option("--wait", "return once the instance runs"),
    { lookIn: "the application's team" },
  ).action(
    async (
      name: string,
      options: {
        app: string;
        team?: string;
        stack?: string;
        type?: string;
        template?: string;
        wait?: boolean;
        json?: boolean;
      },
    ) => {
      const { client } = await context.connect();
      let created = await client.instances.create.mutate({
        name,
        applicationId: (await resolveApplication(client, options.app, options.team)).id,
        stack: options.stack,
        projectType: options.type,
        template: options.template,
      });
      if (options.wait) {
        for (let i = 0; i < 600 && created.meta.state === "starting"; i++) {
          await sleep(500);
          created = await client.instances.get.query({ instanceId: created.id });
        }
      }
      context.print(
        options.json
          ? json(created)
          : `Created instance ${created.name} (id ${created.id}): ${created.meta.state}.\n` +
              `Editor: ${created.url ?? "-"}\n`,
      );
    },
  );

  withJson(
    instanceCommand(instances, "show", [
      {
        does: "Show an instance's state, editor, stack and variables",
        run: "instances show line-one",
      },
      {
        does: "The same, looking the name up in one team only",
        run: "instances show line-one --team night",
      },
    ]).description("An instance: its state, editor URL, stack and variables (viewers and up)"),
  ).action(async (instance: string, options: InstanceOptions) => {
    const { client } = await context.connect();
    const found = await client.instances.get.query({
      instanceId: (await resolveInstance(client, instance, options.team)).id,
    });
    context.print(options.json ? json(found) : describe(found));
  });

  withJson(
    instanceCommand(instances, "editor-token", [
      {
        does: "A token for one instance's editor and admin API (an hour; viewers read only)",
        run: "instances editor-token line-one",
      },
      {
        does: "One for five minutes, with the editor's URL and its expiry, as JSON",
        run: "instances editor-token line-one --expires-in 300 --json",
      },
    ])
      .summary("A token for one instance's editor and admin API (viewers and up)")
      .description(
        "A token (fpe_…) for one instance's editor and Node-RED admin API, and nothing else of " +
          "the platform: your own token never reaches the instance. Its rights are your role in " +
          "the team (members and owners deploy, viewers read); it ends at its expiry, when unused " +
          "for the sessions' idle time, and with your sessions. Prints the token alone, for " +
          '`"Authorization: Bearer $(flowplane instances editor-token line-one)"`; the ' +
          "editor's URL and the expiry go to the terminal (stderr); --json prints the whole reply.",
      )
      .option(
        "--expires-in <seconds>",
        "seconds until it expires, 60 to 86400 (default 3600)",
        expiresIn,
      )
      .addHelpText(
        "after",
        "\nDeploying with curl, through the editor's admin API (its URL: `instances show`):\n" +
          '  curl -H "Authorization: Bearer $(flowplane instances editor-token line-one)" \\\n' +
          "    -H 'Content-Type: application/json' --data @flows.json <editor url>/flows",
      ),
  ).action(async (instance: string, options: InstanceOptions & { expiresIn?: number }) => {
    const { client } = await context.connect();
    const created = await client.instances.editorToken.mutate({
      instanceId: (await resolveInstance(client, instance, options.team)).id,
      expiresIn: options.expiresIn,
    });
    if (options.json) return context.print(json(created));
    context.print(`${created.token}\n`);
    context.tell(
      `Editor: ${created.url}\nExpires: ${when(created.expiresAt)} ` +
        `(${created.permissions === "*" ? "deploys" : "reads only"})`,
    );
  });

  for (const action of Object.keys(ACTIONS) as Action[]) {
    withJson(
      instanceCommand(instances, action, [
        { does: ACTIONS[action].summary, run: `instances ${action} line-one` },
      ]).description(`${ACTIONS[action].summary}; returns once it is done`),
    ).action(async (instance: string, options: InstanceOptions) => {
      const { client } = await context.connect();
      const found = await resolveInstance(client, instance, options.team);
      const result = await client.instances[action].mutate({ instanceId: found.id });
      context.print(options.json ? json(result) : `${found.name} ${ACTIONS[action].done}.\n`);
    });
  }

  withJson(
    withYes(
      instanceCommand(instances, "delete", [
        {
          does: "Delete an instance: its Node-RED, files and flows (asks first)",
          run: "instances delete line-one",
        },
        {
          does: "From a script, which has no terminal to answer the question",
          run: "instances delete line-one --team night --yes",
        },
      ])
        .summary("Delete an instance (owners), asking first")
        .description(
          "Delete an instance (owners): its Node-RED stops, and its files, flows and log are " +
            "deleted for good. Asked at the terminal first; without a terminal (a script), " +
            "only with --yes.",
        ),
      "delete",
    ),
  ).action(
    async (instance: string, options: InstanceOptions & { yes?: boolean }, command: Command) => {
      refuseUnanswerable(context, command, options.yes);
      const { client } = await context.connect();
      const { id: instanceId, name: instanceName } = await resolveInstance(
        client,
        instance,
        options.team,
      );
      if (!options.yes) {
        const found = await client.instances.get.query({ instanceId });
        await confirmOrStop(
          context,
          `Delete instance ${found.name} (id ${found.id}) of team ${found.team.name}? ` +
            "Its Node-RED stops; its flows, files and log are deleted for good.",
          `${found.name} was not deleted`,
        );
      }
      const result = await client.instances.delete.mutate({ instanceId });
      context.print(options.json ? json(result) : `Deleted instance ${instanceName}.\n`);
    },
  );

  withJson(
    instanceCommand(instances, "logs", [
      { does: "The last 30 lines of an instance's Node-RED log", run: "instances logs line-one" },
      {
        does: "Follow the log as Node-RED writes it, until Ctrl-C",
        run: "instances logs line-one --follow",
      },
    ])
      .description("An instance's Node-RED log, oldest first (viewers and up)")
      .option("--limit <n>", "how many entries (default 30, at most 1000)", positiveInteger)
      .option("--follow", "keep printing new entries until Ctrl-C")
      .addOption(new Option("--max-polls <n>").argParser(positiveInteger).hideHelp())
      .addOption(new Option("--poll-interval <ms>").argParser(positiveInteger).hideHelp()),
  ).action(
    async (
      instance: string,
      options: InstanceOptions & {
        limit?: number;
        follow?: boolean;
        maxPolls?: number;
        pollInterval?: number;
      },
    ) => {
      const { client } = await context.connect();
      const instanceId = (await resolveInstance(client, instance, options.team)).id;
      const print = (entries: { ts: number; level: string; msg: string }[]) => {
        for (const entry of entries) {
          context.print(
            options.json
              ? `${JSON.stringify(entry)}\n`
              : `${when(entry.ts)}  ${entry.level.padEnd(6)} ${entry.msg}\n`,
          );
        }
      };
      const page = await client.instances.logs.query({ instanceId, limit: options.limit });
      if (options.json && !options.follow) return context.print(json(page));
      print(page.log);
      if (!options.follow) return;
      let cursor = page.meta.next_cursor;
      for (let poll = 0; options.maxPolls === undefined || poll < options.maxPolls; poll++) {
        await sleep(options.pollInterval ?? FOLLOW_INTERVAL_MS);
        const next = await client.instances.logs.query({ instanceId, cursor, limit: 1000 });
        print(next.log);
        cursor = next.meta.next_cursor ?? cursor;
      }
    },
  );

  addInstanceEnvCommands(instances, context);
}

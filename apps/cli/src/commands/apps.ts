// `flowplane apps`: a team's applications — listed with their instances, created, deleted. An
// application is named by its id or its name, looked up in the team that --team names, else in
// all the caller's teams (resolve/: a name that several share is refused, listing them).
import type { Command } from "commander";
import type { Context } from "../context";
import { json, table } from "../output";
import { teamCommand } from "./options";
import { resolveApplication, resolveTeam } from "../resolve";

export function addAppsCommands(program: Command, context: Context): void {
  const apps = program.command("apps").description("A team's applications");

  teamCommand(
    apps,
    "list",
    [{ does: "List a team's applications and their instances", run: "apps list --team night" }],
    (command) =>
      command.description("A team's applications, with their instances (viewers and up)"),
  ).action(async (options: { team: string; json?: boolean }) => {
    const { client } = await context.connect();
    const list = await client.applications.ofTeam.query({
      teamId: (await resolveTeam(client, options.team)).id,
    });
    if (options.json) return context.print(json(list));
    context.print(
      list.applications.length === 0
        ? "No applications in this team.\n"
        : table(list.applications, [
            { header: "ID", value: (a) => a.id },
            { header: "NAME", value: (a) => a.name },
            { header: "INSTANCES", value: (a) => a.instances.map((i) => i.name).join(", ") || "-" },
            { header: "DESCRIPTION", value: (a) => a.description ?? "" },
          ]),
    );
  });

  teamCommand(
    apps,
    "create",
    [{ does: "Create an application in a team", run: 'apps create "Line 1" --team night' }],
    (command) =>
      command
        .description("Create an application (owners)")
        .argument("<name>", "the application's name")
        .option("--description <text>", "what it is for"),
  ).action(
    async (name: string, options: { team: string; description?: string; json?: boolean }) => {
      const { client } = await context.connect();
      const created = await client.applications.create.mutate({
        name,
        teamId: (await resolveTeam(client, options.team)).id,
        description: options.description,
      });
      context.print(
        options.json ? json(created) : `Created application ${created.name} (id ${created.id}).\n`,
      );
    },
  );

  teamCommand(
    apps,
    "delete",
    [
      { does: "Delete an application that has no instances", run: "apps delete <applicationId>" },
      {
        does: "The same, naming the application by its name in a team",
        run: 'apps delete "Line 1" --team night',
      },
    ],
    (command) =>
      command
        .description("Delete an application; it must have no instances (owners)")
        .argument("<application>", "the application's id or name"),
    { lookIn: "the application's team" },
  ).action(async (application: string, options: { team?: string; json?: boolean }) => {
    const { client } = await context.connect();
    const found = await resolveApplication(client, application, options.team);
    const result = await client.applications.delete.mutate({ applicationId: found.id });
    context.print(
      options.json ? json(result) : `Deleted application ${found.name} (id ${found.id}).\n`,
    );
  });
}

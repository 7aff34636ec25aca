// `flowplane device-groups`: an application's device groups — listed (or the whole team's: `list
// --team`), created, shown with their members, devices added and removed, the snapshot every member
// runs set or cleared, deleted (asked first). Every other command names the application
// (--application, by id, or by name in --team); a group is named by its id or its name in the
// application, a device by its id or (with --team) its name in the team.
import type { DeviceGroup as DeviceGroupSchema } from "@flowplane/contract";
import type { z } from "zod";
import type { Command } from "commander";
import type { Client } from "../client";
import type { Context } from "../context";
import { CliError } from "../errors";
import { fields, json, table } from "../output";
import { addEnvCommands } from "./device-env";
import { type Example, withExamples } from "./examples";
import { deviceIdOf } from "./devices";
import { applicationIdOf } from "./instances";
import { withJson, withTeam, withYes } from "./options";
import { teamIdOf } from "./teams/members";

type DeviceGroup = z.infer<typeof DeviceGroupSchema>;

interface Options {
  application: string;
  team?: string;
  json?: boolean;
}

/** The id of the group named by id, or by its name in the application. */
async function groupIdOf(client: Client, applicationId: string, group: string): Promise<string> {
  const { groups } = await client.deviceGroups.list.query({ applicationId, query: group });
  return (
    (
      groups.find((g) => g.id === group) ??
      groups.find((g) => g.name.toLowerCase() === group.toLowerCase())
    )?.id ?? group
  );
}

function describe(group: DeviceGroup): string {
  return (
    fields([
      ["ID", group.id],
      ["Name", group.name],
      ["Description", group.description || "-"],
      ["Application", `${group.application.name} (${group.application.id})`],
      [
        "Target snapshot",
        group.targetSnapshot
          ? `${group.targetSnapshot.name} (${group.targetSnapshot.id})`
          : "- (each member its own)",
      ],
      ["Devices", String(group.deviceCount)],
    ]) +
    (group.devices.length === 0
      ? ""
      : "\n" +
        table(group.devices, [
          { header: "DEVICE", value: (d) => d.id },
          { header: "NAME", value: (d) => d.name },
          { header: "STATUS", value: (d) => d.onlineStatus },
        ]))
  );
}

/** A command in an application's device groups: --application, and --team to name it by name. */
function groupsCommand(group: Command, name: string, examples: readonly Example[]): Command {
  return withTeam(
    withExamples(group.command(name), examples).requiredOption(
      "--application <app>",
      "the application's id, or its name in --team",
    ),
    {
      required: false,
      description: "the team, by id or slug, to name the application and devices by name",
    },
  );
}

export function addDeviceGroupsCommands(program: Command, context: Context): void {
  const groups = program
    .command("device-groups")
    .description("An application's device groups: members, and the snapshot they all run");

  async function connect(options: Options) {
    const { client } = await context.connect();
    return {
      client,
      applicationId: await applicationIdOf(client, options.application, options.team),
    };
  }

  withJson(
    withTeam(
      withExamples(groups.command("list"), [
        {
          does: "An application's device groups",
          run: "device-groups list --application A1b2c3d4e5f6",
        },
        { does: "Every device group of a team", run: "device-groups list --team night" },
      ])
        .description("An application's device groups, or the whole team's (members and up)")
        .option("--application <app>", "the application's id, or its name in --team"),
      {
        required: false,
        description: "the team, by id or slug: its groups, or its application's by name",
      },
    ),
  ).action(async (options: Partial<Options>, command: Command) => {
    if (options.application === undefined && options.team === undefined) {
      command.error("error: give --application, or --team for every group of the team", {
        exitCode: 2,
      });
    }
    const { client } = await context.connect();
    const list =
      options.application !== undefined
        ? await client.deviceGroups.list.query({
            applicationId: await applicationIdOf(client, options.application, options.team),
          })
        : await client.deviceGroups.ofTeam.query({
            teamId: await teamIdOf(client, options.team!),
          });
    if (options.json) return context.print(json(list));
    context.print(
      list.groups.length === 0
        ? "No device groups.\n"
        : table(list.groups, [
            { header: "ID", value: (g) => g.id },
            { header: "NAME", value: (g) => g.name },
            ...(options.application === undefined
              ? [
                  {
                    header: "APPLICATION",
                    value: (g: (typeof list.groups)[number]) => g.application.name,
                  },
                ]
              : []),
            { header: "DEVICES", value: (g) => String(g.deviceCount) },
            { header: "TARGET", value: (g) => g.targetSnapshot?.name ?? "-" },
            { header: "DESCRIPTION", value: (g) => g.description },
          ]),
    );
  });

  withJson(
    groupsCommand(groups, "create", [
      {
        does: "An empty group in an application",
        run: "device-groups create Line-A --application A1b2c3d4e5f6",
      },
    ])
      .description("Create an empty device group in an application (owners)")
      .argument("<name>", "the group's name")
      .option("--description <text>", "what it is"),
  ).action(async (name: string, options: Options & { description?: string }) => {
    const { client, applicationId } = await connect(options);
    const created = await client.deviceGroups.create.mutate({
      applicationId,
      name,
      description: options.description,
    });
    context.print(
      options.json ? json(created) : `Created device group ${created.name} (id ${created.id}).\n`,
    );
  });

  withJson(
    groupsCommand(groups, "show", [
      {
        does: "A group, its target and its members",
        run: "device-groups show Line-A --application A1b2c3d4e5f6",
      },
    ])
      .description("A device group with its members (members and up)")
      .argument("<group>", "the group's id or name"),
  ).action(async (group: string, options: Options) => {
    const { client, applicationId } = await connect(options);
    const groupId = await groupIdOf(client, applicationId, group);
    const found = await client.deviceGroups.byId.query({ applicationId, groupId });
    context.print(options.json ? json(found) : describe(found));
  });

  for (const [verb, does] of [
    ["add", "Put devices of the application in a group (owners)"],
    ["remove", "Take devices out of a group; they run their own target again (owners)"],
  ] as const) {
    withJson(
      groupsCommand(groups, verb, [
        {
          does,
          run: `device-groups ${verb} Line-A D1a2b3c4d5e6 D2b3c4d5e6f7 --application A1b2c3d4e5f6`,
        },
      ])
        .description(does)
        .argument("<group>", "the group's id or name")
        .argument("<devices...>", "the devices' ids (or names, with --team)"),
    ).action(async (group: string, devices: string[], options: Options) => {
      const { client, applicationId } = await connect(options);
      const groupId = await groupIdOf(client, applicationId, group);
      const ids = await Promise.all(devices.map((d) => deviceIdOf(client, d, options.team)));
      await client.deviceGroups.membership.mutate({ applicationId, groupId, [verb]: ids });
      context.print(
        options.json
          ? json({ status: "okay" })
          : `${verb === "add" ? "Added" : "Removed"} ${ids.length} device${ids.length === 1 ? "" : "s"} ${verb === "add" ? "to" : "from"} group ${groupId}.\n`,
      );
    });
  }

  withJson(
    groupsCommand(groups, "target", [
      {
        does: "Make a snapshot of the application what every member runs",
        run: "device-groups target Line-A S1a2b3c4d5e6 --application A1b2c3d4e5f6",
      },
      {
        does: "Clear it: each member runs its own target again",
        run: "device-groups target Line-A --clear --application A1b2c3d4e5f6",
      },
    ])
      .description("Set or clear the snapshot every member of a group runs (owners)")
      .argument("<group>", "the group's id or name")
      .argument("[snapshot]", "the snapshot's id")
      .option("--clear", "clear it"),
  ).action(
    async (
      group: string,
      snapshot: string | undefined,
      options: Options & { clear?: boolean },
      command: Command,
    ) => {
      if ((snapshot === undefined) === !options.clear) {
        command.error("error: give a snapshot or --clear", { exitCode: 2 });
      }
      const { client, applicationId } = await connect(options);
      const groupId = await groupIdOf(client, applicationId, group);
      await client.deviceGroups.update.mutate({
        applicationId,
        groupId,
        targetSnapshotId: snapshot ?? null,
      });
      context.print(
        options.json
          ? json({ status: "okay" })
          : snapshot
            ? `Group ${groupId}'s devices run snapshot ${snapshot}.\n`
            : `Group ${groupId} has no target snapshot now.\n`,
      );
    },
  );

  withJson(
    withYes(
      groupsCommand(groups, "delete", [
        {
          does: "Delete a group (asks first); its devices run their own target again",
          run: "device-groups delete Line-A --application A1b2c3d4e5f6",
        },
        {
          does: "From a script",
          run: "device-groups delete Line-A --application A1b2c3d4e5f6 --yes",
        },
      ])
        .description("Delete a device group (owners), asking first; its devices are kept")
        .argument("<group>", "the group's id or name"),
      "delete",
    ),
  ).action(async (group: string, options: Options & { yes?: boolean }, command: Command) => {
    if (!options.yes && !context.canAsk()) {
      command.error(
        "error: device-groups delete asks before it deletes, and no terminal is there to " +
          "answer: give --yes to delete without asking",
        { exitCode: 2 },
      );
    }
    const { client, applicationId } = await connect(options);
    const groupId = await groupIdOf(client, applicationId, group);
    if (!options.yes) {
      const found = await client.deviceGroups.byId.query({ applicationId, groupId });
      if (!(await context.confirm(`Delete device group ${found.name} (id ${found.id})?`))) {
        throw new CliError(`${found.name} was not deleted`, "not_confirmed");
      }
    }
    await client.deviceGroups.delete.mutate({ applicationId, groupId });
    context.print(options.json ? json({ status: "okay" }) : `Deleted device group ${groupId}.\n`);
  });

  addEnvCommands(groups, context, {
    group: "device-groups",
    command: (env, name, examples) =>
      groupsCommand(env, name, examples).argument("<group>", "the group's id or name"),
    example: "Line-A --application A1b2c3d4e5f6",
    readers: "members and up",
    changers: "owners",
    takesEffect:
      "every member gets them under its own (a member's variable of the same name wins) at its next check-in",
    async open(client, group, options: Options) {
      const applicationId = await applicationIdOf(client, options.application, options.team);
      const groupId = await groupIdOf(client, applicationId, group);
      return {
        read: async () =>
          (await client.deviceGroups.byId.query({ applicationId, groupId })).settings.env,
        write: async (env) => {
          await client.deviceGroups.updateSettings.mutate({ applicationId, groupId, env });
        },
      };
    },
  });
}

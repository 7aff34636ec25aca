// `flowplane device-groups`: an application's device groups — listed (or the whole team's: `list
// --team`), created, shown with their members, devices added and removed, the target snapshot
// every member deploys at its next check-in set or cleared, deleted (asked first). Every other
// command names the application (--application, by id or name, in --team or else in all the
// caller's teams); a group is named by its id or its name in the application, a device by its id
// or its name (resolve/).
import type { DeviceGroup as DeviceGroupSchema } from "@flowplane/contract";
import type { z } from "zod";
import type { Command } from "commander";
import type { Context } from "../context";
import { fields, json, table } from "../output";
import { addEnvCommands } from "./device-env";
import { applicationCommand as groupsCommand, teamCommand, withJson, withYes } from "./options";
import {
  resolveApplication,
  resolveDevice,
  resolveDeviceGroup,
  resolveSnapshot,
  resolveTeam,
} from "../resolve";
import { needSnapshotOrClear, targetChanged } from "./targets";
import { confirmOrStop, refuseUnanswerable } from "./ask-first";

type DeviceGroup = z.infer<typeof DeviceGroupSchema>;

interface Options {
  application: string;
  team?: string;
  json?: boolean;
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

export function addDeviceGroupsCommands(program: Command, context: Context): void {
  const groups = program
    .command("device-groups")
    .description("An application's device groups: members, and the target snapshot they deploy");

  async function connect(options: Options) {
    const { client } = await context.connect();
    const application = await resolveApplication(client, options.application, options.team);
    return { client, application, applicationId: application.id };
  }

  teamCommand(
    groups,
    "list",
    [
      {
        does: "An application's device groups",
        run: "device-groups list --application A1b2c3d4e5f6",
      },
      { does: "Every device group of a team", run: "device-groups list --team night" },
    ],
    (command) =>
      command
        .description("An application's device groups, or the whole team's (members and up)")
        .option("--application <app>", "the application's id, or its name in --team"),
    {
      required: false,
      description: "the team, by id or slug: its groups, or its application's by name",
    },
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
            applicationId: (await resolveApplication(client, options.application, options.team)).id,
          })
        : await client.deviceGroups.ofTeam.query({
            teamId: (await resolveTeam(client, options.team!)).id,
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
    const { client, application, applicationId } = await connect(options);
    const { id: groupId } = await resolveDeviceGroup(client, application, group);
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
        .argument("<devices...>", "the devices' ids or names"),
    ).action(async (group: string, devices: string[], options: Options) => {
      const { client, application, applicationId } = await connect(options);
      const found = await resolveDeviceGroup(client, application, group);
      const named = [];
      for (const d of devices) named.push(await resolveDevice(client, d, options.team));
      const ids = named.map((d) => d.id);
      await client.deviceGroups.membership.mutate({
        applicationId,
        groupId: found.id,
        [verb]: ids,
      });
      context.print(
        options.json
          ? json({ status: "okay" })
          : `${verb === "add" ? "Added" : "Removed"} ${named.map((d) => d.name).join(", ")} ${verb === "add" ? "to" : "from"} device group ${found.name}.\n`,
      );
    });
  }

  withJson(
    groupsCommand(groups, "target", [
      {
        does: "Give every member a snapshot of the application to deploy at its next check-in",
        run: "device-groups target Line-A Release-3 --application Line --team night",
      },
      {
        does: "Clear it: each member deploys its own target again at its next check-in",
        run: "device-groups target Line-A --clear --application Line --team night",
      },
    ])
      .description(
        "Set or clear the target snapshot of every member of a group (owners); each deploys it " +
          "at its next check-in",
      )
      .argument("<group>", "the group's id or name")
      .argument("[snapshot]", "the snapshot's id or name (one of the application's)")
      .option("--clear", "clear it"),
  ).action(
    async (
      group: string,
      snapshot: string | undefined,
      options: Options & { clear?: boolean },
      command: Command,
    ) => {
      needSnapshotOrClear(command, snapshot, options.clear);
      const { client, application, applicationId } = await connect(options);
      const found = await resolveDeviceGroup(client, application, group);
      const target =
        snapshot === undefined
          ? undefined
          : await resolveSnapshot(client, { application }, snapshot);
      await client.deviceGroups.update.mutate({
        applicationId,
        groupId: found.id,
        targetSnapshotId: target?.id ?? null,
      });
      if (options.json) return context.print(json({ status: "okay" }));
      const owner = `device group ${found.name}'s`;
      context.print(targetChanged(owner, "each of its devices", target));
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
    refuseUnanswerable(context, command, options.yes);
    const { client, application, applicationId } = await connect(options);
    const found = await resolveDeviceGroup(client, application, group);
    if (!options.yes) {
      await confirmOrStop(
        context,
        `Delete device group ${found.name} (id ${found.id})?`,
        `${found.name} was not deleted`,
      );
    }
    await client.deviceGroups.delete.mutate({ applicationId, groupId: found.id });
    context.print(
      options.json
        ? json({ status: "okay" })
        : `Deleted device group ${found.name} (id ${found.id}).\n`,
    );
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
      const application = await resolveApplication(client, options.application, options.team);
      const applicationId = application.id;
      const { id: groupId } = await resolveDeviceGroup(client, application, group);
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

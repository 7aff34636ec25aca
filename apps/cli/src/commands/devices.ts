// `flowplane devices`: a team's remote devices (a Node-RED on your own hardware run by the FlowFuse
// device agent) — listed, shown, created (the one-time credentials and one-time code printed once,
// or the credentials written to a device.yml the agent reads), renamed, given new credentials, and
// given a target snapshot (deployed at its next check-in); moved and deleted, one or many
// (device-bulk.ts); snapshots of what a device runs (`devices snapshots list|create|delete`), their
// variables (`env`, device-env.ts) and the team's provisioning tokens (`provisioning`,
// provisioning.ts). A device is named by its id or its name, in the team --team names or else in
// all the caller's teams (resolve/).
import type { Device } from "@flowplane/contract";
import type { Command } from "commander";
import type { Context } from "../context";
import { fields, json, table, when } from "../output";
import { addDeviceBulkCommands } from "./device-bulk";
import { addEnvCommands } from "./device-env";
import { type Example } from "./examples";
import { addProvisioningCommands } from "./provisioning";
import { commandOnOne, needOneAssignment, teamCommand, withJson } from "./options";
import { writePrivate } from "./private-file";
import {
  resolveApplication,
  resolveAssignment,
  resolveDevice,
  resolveSnapshot,
  resolveTeam,
} from "../resolve";
import { needSnapshotOrClear, targetChanged } from "./targets";
import { deviceYml } from "./device-yml";

interface Options {
  team?: string;
  json?: boolean;
}

function owner(device: Device): string {
  if (device.instance) return `instance ${device.instance.name} (${device.instance.id})`;
  if (device.application)
    return `application ${device.application.name} (${device.application.id})`;
  return "-";
}

function describe(device: Device): string {
  return fields([
    ["ID", device.id],
    ["Name", device.name],
    ["Type", device.type || "-"],
    ["Team", `${device.team.name} (${device.team.slug})`],
    ["Assigned to", owner(device)],
    ["Group", device.deviceGroup ? `${device.deviceGroup.name} (${device.deviceGroup.id})` : "-"],
    ["Status", `${device.onlineStatus}, ${device.status}`],
    ["Last seen", when(device.lastSeenAt)],
    [
      "Target snapshot",
      device.targetSnapshot ? `${device.targetSnapshot.name} (${device.targetSnapshot.id})` : "-",
    ],
    [
      "Active snapshot",
      device.activeSnapshot ? `${device.activeSnapshot.name} (${device.activeSnapshot.id})` : "-",
    ],
    ["Agent", device.agentVersion ?? "-"],
  ]);
}

interface Credentials {
  token: string;
  credentialSecret: string;
  /** The platform's MQTT channel, when it has a broker. */
  broker?: { url: string; username: string; password: string };
}

/**
 * The agent's device.yml for these credentials: with the broker's keys when the platform has one,
 * so the agent takes the live channel (without them it polls over HTTP).
 */
function credentialsYml(deviceId: string, credentials: Credentials, url: string) {
  const { token, credentialSecret, broker } = credentials;
  return deviceYml(
    {
      deviceId,
      token,
      credentialSecret,
      ...(broker && {
        brokerURL: broker.url,
        brokerUsername: broker.username,
        brokerPassword: broker.password,
      }),
    },
    url,
  );
}

/** How to set the device up with its one-time code instead of writing its device.yml. */
function otcLine(otc: string | undefined, url: string): string {
  if (otc === undefined) return "";
  return (
    "Or, on the device, set it up with its one-time code (works once, for 24 hours):\n" +
    `  flowfuse-device-agent --otc ${otc} --ff-url ${url.replace(/\/+$/, "")}\n`
  );
}

/** A command on one device: `<device>`, and --team to look it up by name in. */
export function deviceCommand(group: Command, name: string, examples: readonly Example[]): Command {
  return commandOnOne("device", group, name, examples);
}

/** The `devices` command and its subcommands (device-snapshots.ts adds `devices snapshots`). */
export function addDevicesCommands(program: Command, context: Context): Command {
  const devices = program
    .command("devices")
    .description("A team's remote devices, run by the FlowFuse device agent");

  teamCommand(
    devices,
    "list",
    [
      { does: "The team's devices", run: "devices list --team night" },
      {
        does: "Only an application's",
        run: "devices list --team night --application Line",
      },
    ],
    (command) =>
      command
        .description("The team's devices, or one application's (viewers and up)")
        .option("--application <app>", "only the devices of this application (id or name)"),
  ).action(async (options: Options & { team: string; application?: string }) => {
    const { client } = await context.connect();
    const list = options.application
      ? await client.devices.ofApplication.query({
          applicationId: (await resolveApplication(client, options.application, options.team)).id,
        })
      : await client.devices.ofTeam.query({ teamId: (await resolveTeam(client, options.team)).id });
    if (options.json) return context.print(json(list));
    context.print(
      list.devices.length === 0
        ? "No devices.\n"
        : table(list.devices, [
            { header: "ID", value: (d) => d.id },
            { header: "NAME", value: (d) => d.name },
            { header: "TYPE", value: (d) => d.type || "-" },
            { header: "STATUS", value: (d) => d.onlineStatus },
            { header: "ASSIGNED", value: (d) => d.application?.name ?? d.instance?.name ?? "-" },
            { header: "LAST SEEN", value: (d) => when(d.lastSeenAt) },
          ]) +
            (list.meta.next_cursor
              ? `${list.count} devices; the first ${list.devices.length} shown.\n`
              : ""),
    );
  });

  withJson(
    deviceCommand(devices, "show", [
      { does: "A device: where it is assigned, what it runs", run: "devices show D1a2b3c4d5e6" },
    ]).description("A device (viewers and up)"),
  ).action(async (device: string, options: Options) => {
    const { client } = await context.connect();
    const deviceId = (await resolveDevice(client, device, options.team)).id;
    const found = await client.devices.byId.query({ deviceId });
    context.print(options.json ? json(found) : describe(found));
  });

  teamCommand(
    devices,
    "create",
    [
      {
        does: "A device of an application; its credentials are printed once",
        run: "devices create line-1 --team night --application Line --type RaspberryPi4",
      },
      {
        does: "Write the agent's device.yml (readable by you alone) instead of printing",
        run: "devices create line-2 --team night --output device.yml",
      },
    ],
    (command) =>
      command
        .description(
          "Create a device (owners). Its token and credential secret are shown once and never " +
            "again: printed, or written with the platform's URL to the agent's device.yml (--output).",
        )
        .argument("<name>", "the device's name")
        .option("--application <app>", "assign it to this application of the team (id or name)")
        .option("--instance <instance>", "assign it to this hosted instance (id or name)")
        .option("--type <type>", "free text, e.g. the hardware")
        .option("--output <file>", "write the agent's device.yml here (created, mode 0600)"),
  ).action(
    async (
      name: string,
      options: Options & {
        team: string;
        application?: string;
        instance?: string;
        type?: string;
        output?: string;
      },
      command: Command,
    ) => {
      needOneAssignment(command, options);
      const { client, url } = await context.connect();
      const team = (await resolveTeam(client, options.team)).id;
      const created = await client.devices.create.mutate({
        name,
        team,
        type: options.type,
        ...(await resolveAssignment(client, options, options.team)),
      });
      if (options.output !== undefined) {
        await writePrivate(options.output, credentialsYml(created.id, created.credentials, url));
        return context.print(
          options.json
            ? json({ ...created, credentials: undefined, file: options.output })
            : `Created device ${created.name} (id ${created.id}); its device.yml is ${options.output}.\n`,
        );
      }
      context.print(
        options.json
          ? json(created)
          : `Created device ${created.name} (id ${created.id}). Its credentials, shown this once:\n` +
              credentialsYml(created.id, created.credentials, url) +
              otcLine(created.credentials.otc, url),
      );
    },
  );

  withJson(
    deviceCommand(devices, "rename", [
      { does: "Rename a device", run: "devices rename D1a2b3c4d5e6 line-1b" },
    ])
      .description("Rename a device (owners)")
      .argument("<name>", "its new name"),
  ).action(async (device: string, name: string, options: Options) => {
    const { client } = await context.connect();
    const found = await resolveDevice(client, device, options.team);
    const renamed = await client.devices.update.mutate({ deviceId: found.id, name });
    context.print(
      options.json ? json(renamed) : `Renamed device ${found.name} (id ${found.id}) to ${name}.\n`,
    );
  });

  withJson(
    deviceCommand(devices, "generate-credentials", [
      {
        does: "New credentials; the old token stops working at once",
        run: "devices generate-credentials D1a2b3c4d5e6 --output device.yml",
      },
    ])
      .description(
        "New credentials for a device (owners), shown once: the old token stops working at once",
      )
      .option("--output <file>", "write the agent's device.yml here (created, mode 0600)"),
  ).action(async (device: string, options: Options & { output?: string }) => {
    const { client, url } = await context.connect();
    const { id: deviceId, name: deviceName } = await resolveDevice(client, device, options.team);
    const credentials = await client.devices.generateCredentials.mutate({ deviceId });
    const { token, credentialSecret, otc, broker } = credentials;
    if (options.output !== undefined) {
      await writePrivate(options.output, credentialsYml(deviceId, credentials, url));
      return context.print(
        options.json
          ? json({ status: "okay", file: options.output })
          : `New credentials for device ${deviceName} are in ${options.output}.\n`,
      );
    }
    context.print(
      options.json
        ? json({ token, credentialSecret, otc, broker })
        : `New credentials for device ${deviceName}, shown this once:\n` +
            credentialsYml(deviceId, credentials, url) +
            otcLine(otc, url),
    );
  });

  withJson(
    deviceCommand(devices, "target", [
      {
        does: "Give a device a snapshot of its application to deploy at its next check-in",
        run: "devices target line-1 Release-3 --team night",
      },
      { does: "Clear it", run: "devices target line-1 --clear --team night" },
    ])
      .description(
        "Set or clear a device's target snapshot (members and up); the device deploys it at its " +
          "next check-in",
      )
      .argument("[snapshot]", "the snapshot's id or name (one of the device's application's)")
      .option("--clear", "clear it"),
  ).action(
    async (
      device: string,
      snapshot: string | undefined,
      options: Options & { clear?: boolean },
      command: Command,
    ) => {
      needSnapshotOrClear(command, snapshot, options.clear);
      const { client } = await context.connect();
      const { id: deviceId } = await resolveDevice(client, device, options.team);
      const found = await client.devices.byId.query({ deviceId });
      const target =
        snapshot === undefined
          ? undefined
          : await resolveSnapshot(
              client,
              found.application
                ? { application: found.application }
                : found.instance
                  ? { instance: found.instance }
                  : { device: found },
              snapshot,
            );
      const updated = await client.devices.update.mutate({
        deviceId,
        targetSnapshot: target?.id ?? null,
      });
      if (options.json) return context.print(json(updated));
      const owner = `device ${updated.name}'s`;
      context.print(targetChanged(owner, "the device", target));
      // A group's target wins over the device's own.
      if (
        updated.deviceGroup &&
        updated.targetSnapshot &&
        updated.targetSnapshot.id !== target?.id
      ) {
        context.warn(
          `the device is in group ${updated.deviceGroup.name}, whose target ` +
            `${updated.targetSnapshot.name} it deploys instead while the group has one`,
        );
      }
    },
  );

  addEnvCommands(devices, context, {
    group: "devices",
    command: (env, name, examples) => deviceCommand(env, name, examples),
    example: "line-1 --team night",
    readers: "viewers and up",
    changers: "members and owners",
    takesEffect: "the device restarts Node-RED with them at its next check-in",
    async open(client, device, options: Options) {
      const deviceId = (await resolveDevice(client, device, options.team)).id;
      return {
        read: async () => (await client.devices.settings.query({ deviceId })).env,
        write: async (env) => {
          await client.devices.updateSettings.mutate({ deviceId, env });
        },
      };
    },
  });

  addDeviceBulkCommands(devices, context);
  addProvisioningCommands(devices, context);
  return devices;
}

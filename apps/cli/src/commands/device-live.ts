// `flowplane devices logs|restart|suspend|start`: a device reached live, through its agent's MQTT
// session with the platform — its Node-RED log printed (the lines the platform keeps) or followed
// as the agent sends them (Server-Sent Events, until Ctrl-C), and its Node-RED restarted,
// suspended or started by the agent.
import { type DeviceLogLine, FlowplaneClientError, followDeviceLog } from "@flowplane/client";
import { type Command, Option } from "commander";
import type { Context } from "../context";
import { CliError } from "../errors";
import { json, when } from "../output";
import { resolveDevice } from "../resolve";
import { deviceCommand } from "./devices";
import { withJson } from "./options";

interface Options {
  team?: string;
  json?: boolean;
}

/** How long a follower waits before it follows again after the stream ended. */
const RECONNECT_MS = 2_000;

const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new CliError(`not a positive integer: ${value}`, "invalid_argument");
  return n;
};

/** A line as a person reads it: `<time> [<level>] <msg>`. */
const lineOf = (line: DeviceLogLine) => `${when(line.ts)} [${line.level || "-"}] ${line.msg}\n`;

export function addDeviceLiveCommands(devices: Command, context: Context): void {
  withJson(
    deviceCommand(devices, "logs", [
      { does: "The newest lines of a device's Node-RED log", run: "devices logs line-1" },
      {
        does: "Follow it as the device writes it, until Ctrl-C",
        run: "devices logs line-1 --follow --team night",
      },
    ])
      .description(
        "A device's Node-RED log, oldest first (viewers and up; the platform needs its broker)",
      )
      .option("--limit <n>", "how many lines (default 100, at most 1000)", positive)
      .option("--follow", "keep printing lines as the device sends them, until Ctrl-C")
      .addOption(new Option("--max-lines <n>").argParser(positive).hideHelp()),
  ).action(
    async (
      device: string,
      options: Options & { limit?: number; follow?: boolean; maxLines?: number },
    ) => {
      const { client, url, token } = await context.connect();
      const deviceId = (await resolveDevice(client, device, options.team)).id;
      const print = (line: DeviceLogLine) =>
        context.print(options.json ? `${JSON.stringify(line)}\n` : lineOf(line));
      if (!options.follow) {
        const page = await client.devices.logs.query({ deviceId, limit: options.limit });
        if (options.json) return context.print(json(page));
        for (const line of page.log) print(line);
        return;
      }
      // The stream starts with the newest lines kept; after it ends (the device's session ended),
      // it is followed again from the last line printed, waiting for the device to come back.
      let after: number | undefined;
      let printed = 0;
      for (;;) {
        try {
          for await (const line of followDeviceLog({ url, token }, deviceId, { after })) {
            print(line);
            after = line.id;
            if (options.maxLines !== undefined && ++printed >= options.maxLines) return;
          }
        } catch (error) {
          if (error instanceof FlowplaneClientError) {
            throw new CliError(error.message, error.code, [], error.status);
          }
          throw error;
        }
        context.tell("the device's session ended: waiting for it to come back (Ctrl-C to stop)");
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    },
  );

  for (const [action, done, does] of [
    ["restart", "restarted", "Restart a device's Node-RED"],
    ["suspend", "suspended", "Suspend a device's Node-RED until it is started"],
    ["start", "started", "Start a device's suspended Node-RED"],
  ] as const) {
    withJson(
      deviceCommand(devices, action, [
        { does, run: `devices ${action} line-1 --team night` },
      ]).description(`${does}: its agent is asked and answers (owners; the device must be online)`),
    ).action(async (device: string, options: Options) => {
      const { client } = await context.connect();
      const found = await resolveDevice(client, device, options.team);
      const result = await client.devices[action].mutate({ deviceId: found.id });
      context.print(options.json ? json(result) : `Device ${found.name}: Node-RED ${done}.\n`);
    });
  }
}

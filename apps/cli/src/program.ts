// The `flowplane` command line, and how a run ends: 0 on success, 1 when the work failed (the API's
// error, or the CLI's own), 2 when the command line itself was wrong.
import { Command, CommanderError } from "commander";
import packageJson from "../package.json" with { type: "json" };
import { apiFailure } from "./client";
import { addAuditLogCommand } from "./commands/audit-log";
import { addEventsCommand } from "./commands/events";
import { addBrokerCommands } from "./commands/broker";
import { addDeviceGroupsCommands } from "./commands/device-groups";
import { addDeviceSnapshotsCommands } from "./commands/device-snapshots";
import { addDeviceLiveCommands } from "./commands/device-live";
import { addDevicesCommands } from "./commands/devices";
import { addAppsCommands } from "./commands/apps";
import { addInstancesCommands } from "./commands/instances";
import { showExamples } from "./commands/examples";
import { addLibraryCommands } from "./commands/library";
import { addSearchCommand } from "./commands/search";
import { addPipelinesCommands } from "./commands/pipelines";
import { addRolloutsCommands } from "./commands/rollouts";
import { addSnapshotsCommands } from "./commands/snapshots";
import { addInvitationsCommands } from "./commands/teams/invitations";
import { addLoginCommand } from "./commands/accounts/login";
import { addLogoutCommand } from "./commands/accounts/logout";
import { addMembersCommands } from "./commands/teams/members";
import { addTeamTypesCommands } from "./commands/teams/team-types";
import { addTeamsCommands } from "./commands/teams/teams";
import { addTokensCommands } from "./commands/tokens";
import { addUsersCommands } from "./commands/accounts/users";
import { addWhoamiCommand } from "./commands/accounts/whoami";
import { type Context, createContext, type Io } from "./context";
import { CliError } from "./errors";

export function createProgram(context: Context, io: Io): Command {
  // Settings before subcommands: `command()` copies them to each subcommand it creates.
  const program = new Command("flowplane")
    .description(
      "Manage Flowplane users, teams and team types, tokens, applications, hosted instances and\n" +
        "their snapshots, remote devices, their groups and rollouts, team MQTT clients, the team\n" +
        "library and pipelines.\n" +
        "FLOWPLANE_TOKEN and FLOWPLANE_URL override the login stored by `flowplane login`.",
    )
    .version(packageJson.version)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void io.stdout.write(text),
      writeErr: (text) => void io.stderr.write(text),
    })
    .showHelpAfterError("(add --help for usage)");

  addLoginCommand(program, context);
  addLogoutCommand(program, context);
  addWhoamiCommand(program, context);
  addTeamsCommands(program, context);
  addTeamTypesCommands(program, context);
  addMembersCommands(program, context);
  addInvitationsCommands(program, context);
  addTokensCommands(program, context);
  addUsersCommands(program, context);
  addAuditLogCommand(program, context);
  addEventsCommand(program, context);
  addAppsCommands(program, context);
  addInstancesCommands(program, context);
  addSnapshotsCommands(program, context);
  const devices = addDevicesCommands(program, context);
  addDeviceSnapshotsCommands(devices, context);
  addDeviceLiveCommands(devices, context);
  addDeviceGroupsCommands(program, context);
  addRolloutsCommands(program, context);
  addBrokerCommands(program, context);
  addLibraryCommands(program, context);
  addPipelinesCommands(program, context);
  addSearchCommand(program, context);
  showExamples(program);
  return program;
}

/** Runs one command line (`argv` as in process.argv) and returns the exit status. */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  const context = createContext(io);
  try {
    await createProgram(context, io).parseAsync([...argv]);
    return 0;
  } catch (error) {
    // Commander has already printed its message (or the help, or the version).
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    const failure = apiFailure(error);
    const { message, code, details } =
      failure instanceof CliError
        ? failure
        : new CliError(
            failure instanceof Error ? failure.message : String(failure),
            "unexpected_error",
          );
    io.stderr.write(
      `error: ${message} (${code})\n${details.map((line) => `  ${line}\n`).join("")}`,
    );
    return 1;
  }
}

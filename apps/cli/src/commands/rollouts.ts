// `flowplane rollouts`: a snapshot rolled out to an application's devices (a device group's members,
// or devices named one by one) wave by wave, each device gated on its health (docs/rollouts.md) —
// planned (a dry run: who runs what now and will run), created (and, with --watch, followed),
// watched (rollout-watch.ts), paused, resumed, aborted, a wave approved, listed and shown. The
// application is named by id or name (--application, in --team or else in all the caller's teams),
// the snapshot and the group in it, a device by id or name (resolve/); a rollout by its id.
import {
  ROLLOUT_STATES,
  type Rollout,
  type RolloutPlan,
  type RolloutState,
  type RolloutWaveSpec,
  wavesOfText,
} from "@flowplane/contract";
import { type Command, InvalidArgumentError, Option } from "commander";
import type { Context } from "../context";
import { fields, json, table, when } from "../output";
import {
  resolveApplication,
  resolveDevice,
  resolveDeviceGroup,
  resolveRollout,
  resolveSnapshot,
} from "../resolve";
import { type Example, withExamples } from "./examples";
import { applicationCommand, expiry, positiveInteger, withJson, withTeamToLookIn } from "./options";
import { stateLine, watchRollout, wavesTable, words } from "./rollout-watch";

type Wave = RolloutWaveSpec;

/** `1,50%,100%`: a number is a count of devices, N% a share of the target (the contract's). */
export function waves(value: string): Wave[] {
  const parsed = wavesOfText(value);
  if ("waves" in parsed) return parsed.waves;
  throw new InvalidArgumentError(
    `"${parsed.bad.part}" is not a wave: give counts and percentages, comma-separated (1,50%,100%).`,
  );
}

function seconds(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("Not a whole number of seconds.");
  return Number(value);
}

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("Not a whole number.");
  return Number(value);
}

interface InApplication {
  application: string;
  team?: string;
  json?: boolean;
}

interface CreateOptions extends InApplication {
  group?: string;
  devices?: string;
  waves: Wave[];
  soak?: number;
  reportTimeout?: number;
  maxFailures?: number;
  startAt?: string | number;
  requireApproval?: boolean;
  watch?: boolean;
  interval: number;
}

/** What a rollout (or its plan) was asked to do, as label/value pairs. */
function settings(rollout: Rollout | RolloutPlan): [string, string][] {
  return [
    ["Snapshot", `${rollout.snapshot.name} (${rollout.snapshot.id})`],
    ["Application", `${rollout.application.name} (${rollout.application.id})`],
    [
      "Target",
      rollout.deviceGroup ? `device group ${rollout.deviceGroup.name}` : "devices named one by one",
    ],
    ["Soak", `${rollout.soakSeconds} s`],
    ["Report timeout", `${rollout.reportTimeoutSeconds} s`],
    ["Max failures", String(rollout.maxFailures)],
    ["Approval", rollout.requireApproval ? "each wave after the first" : "no"],
    ["Start", when(rollout.startAt, "now")],
  ];
}

function planText(plan: RolloutPlan): string {
  const rows = plan.waves.flatMap((wave) =>
    wave.devices.map((device) => ({ wave: wave.index + 1, device })),
  );
  return (
    fields(settings(plan)) +
    "\n" +
    table(rows, [
      { header: "WAVE", value: (r) => String(r.wave) },
      { header: "DEVICE", value: (r) => r.device.name },
      { header: "RUNS NOW", value: (r) => r.device.runs?.name ?? "-" },
      { header: "WILL RUN", value: (r) => r.device.willRun.name },
    ])
  );
}

function describe(rollout: Rollout): string {
  return (
    fields([
      ["ID", rollout.id],
      ["State", words(rollout.state)],
      ...(rollout.reason ? [["Reason", rollout.reason] as const] : []),
      ["Wave", `${rollout.currentWave + 1} of ${rollout.waves.length}`],
      ["Failures", String(rollout.failures)],
      [
        "Created",
        `${when(rollout.createdAt)}${rollout.createdBy ? ` by ${rollout.createdBy.username}` : ""}`,
      ],
      ["Finished", when(rollout.finishedAt, "-")],
      ...settings(rollout),
    ]) +
    "\n" +
    wavesTable(rollout)
  );
}

/** A command on one rollout: `<rollout>` (its id), and --team, the team it must be of. */
function onRollout(group: Command, name: string, examples: readonly Example[]): Command {
  return withTeamToLookIn(
    withExamples(group.command(name), examples).argument("<rollout>", "the rollout's id"),
    "the rollout's team (checked)",
  );
}

interface OnRollout {
  team?: string;
  json?: boolean;
}

/** `--interval`: how often a watch asks the API. */
function withInterval(command: Command): Command {
  return command.addOption(
    new Option("--interval <ms>", "how often to ask, in milliseconds")
      .argParser(positiveInteger)
      .default(1000),
  );
}

/** `create` and `plan`: the snapshot, the target and the waves, and how each device is gated. */
function rolloutCommand(group: Command, name: string, examples: readonly Example[]): Command {
  return withJson(
    applicationCommand(group, name, examples)
      .argument("<snapshot>", "the snapshot's id or name (one of the application's)")
      .option("--group <group>", "roll out to this device group's members (id or name)")
      .option("--devices <devices>", "or to these devices, comma-separated (ids or names)")
      .requiredOption(
        "--waves <waves>",
        "the waves in order, comma-separated: N devices or N% of them; the last takes the rest",
        waves,
      )
      .option("--soak <seconds>", "how long each device must stay healthy (default 60)", seconds)
      .option(
        "--report-timeout <seconds>",
        "how long a device has to report running it (default 600)",
        seconds,
      )
      .option(
        "--max-failures <n>",
        "devices that may fail before it rolls back (default 0)",
        wholeNumber,
      )
      .option("--start-at <time>", "start no sooner (ISO-8601)", expiry)
      .option("--require-approval", "each wave after the first waits for `rollouts approve`"),
  );
}

export function addRolloutsCommands(program: Command, context: Context): void {
  const rollouts = program
    .command("rollouts")
    .description("Roll a snapshot out to devices wave by wave, each gated on its health");

  async function request(
    snapshot: string,
    options: CreateOptions,
    command: Command,
    dryRun: boolean,
  ) {
    if ((options.group === undefined) === (options.devices === undefined)) {
      command.error("error: give --group or --devices (one of them)", { exitCode: 2 });
    }
    const { client } = await context.connect();
    const application = await resolveApplication(client, options.application, options.team);
    const found = await resolveSnapshot(client, { application }, snapshot);
    const deviceGroupId =
      options.group === undefined
        ? undefined
        : (await resolveDeviceGroup(client, application, options.group)).id;
    let devices: string[] | undefined;
    if (options.devices !== undefined) {
      devices = [];
      for (const given of options.devices.split(",").map((d) => d.trim())) {
        devices.push((await resolveDevice(client, given, options.team)).id);
      }
    }
    const answer = await client.rollouts.create.mutate({
      snapshotId: found.id,
      deviceGroupId,
      devices,
      waves: options.waves,
      soakSeconds: options.soak,
      reportTimeoutSeconds: options.reportTimeout,
      maxFailures: options.maxFailures,
      startAt: options.startAt === undefined ? undefined : new Date(options.startAt).toISOString(),
      requireApproval: options.requireApproval,
      dryRun,
    });
    return { client, answer };
  }

  withInterval(
    rolloutCommand(rollouts, "create", [
      {
        does: "One device first, then half, then the rest, each healthy for 5 minutes",
        run: "rollouts create Release-3 --application Line --group Line-A --waves 1,50%,100% --soak 300",
      },
      {
        does: "Two devices, an owner approving each wave after the first, followed until it ends",
        run: "rollouts create Release-3 --application Line --devices line-1,line-2 --waves 1,1 --require-approval --watch",
      },
    ])
      .description("Start a rollout (owners): prints its id and state")
      .option("--watch", "then follow it as `rollouts watch` does"),
  ).action(async (snapshot: string, options: CreateOptions, command: Command) => {
    const { client, answer } = await request(snapshot, options, command, false);
    const rollout = answer as Rollout;
    if (options.watch) {
      if (!options.json)
        context.print(`Created rollout ${rollout.id} (${words(rollout.state)}).\n`);
      return watchRollout(context, client, rollout.id, {
        intervalMs: options.interval,
        asJson: options.json,
      });
    }
    context.print(
      options.json ? json(rollout) : `Created rollout ${rollout.id} (${words(rollout.state)}).\n`,
    );
  });

  rolloutCommand(rollouts, "plan", [
    {
      does: "Which devices each wave takes, what they run now and will run (nothing changes)",
      run: "rollouts plan Release-3 --application Line --group Line-A --waves 1,50%,100%",
    },
  ])
    .description("A rollout's plan, as `create` would make it, changing nothing (owners)")
    .action(async (snapshot: string, options: CreateOptions, command: Command) => {
      const { answer } = await request(snapshot, options, command, true);
      const plan = answer as RolloutPlan;
      context.print(options.json ? json(plan) : planText(plan));
    });

  withJson(
    withInterval(
      onRollout(rollouts, "watch", [
        {
          does: "Follow a rollout until it ends (exit 0 only when it succeeded)",
          run: "rollouts watch R1a2b3c4d5e6",
        },
      ]).description(
        "Follow a rollout's waves and devices until it ends: exit 0 when it succeeded, 1 otherwise",
      ),
    ),
  ).action(async (given: string, options: OnRollout & { interval: number }) => {
    const { client } = await context.connect();
    const { id } = await resolveRollout(client, given, options.team);
    await watchRollout(context, client, id, {
      intervalMs: options.interval,
      asJson: options.json,
    });
  });

  for (const [verb, does] of [
    ["pause", "Pause a rollout: no device is deployed and no wave starts until it is resumed"],
    ["resume", "Resume a paused rollout where it stopped"],
    ["abort", "Abort a rollout: every device it deployed runs what it ran before"],
    ["approve", "Approve the next wave of a rollout waiting for it"],
  ] as const) {
    withJson(
      onRollout(rollouts, verb, [{ does, run: `rollouts ${verb} R1a2b3c4d5e6` }]).description(
        `${does} (owners)`,
      ),
    ).action(async (given: string, options: OnRollout) => {
      const { client } = await context.connect();
      const { id } = await resolveRollout(client, given, options.team);
      const rollout = await client.rollouts[verb].mutate({ rolloutId: id });
      context.print(options.json ? json(rollout) : stateLine(rollout));
    });
  }

  withJson(
    applicationCommand(rollouts, "list", [
      { does: "An application's rollouts, newest first", run: "rollouts list --application Line" },
      {
        does: "A device group's rollouts under way",
        run: "rollouts list --application Line --group Line-A --state running",
      },
    ])
      .description(
        "An application's rollouts, or one device group's, newest first (viewers and up)",
      )
      .option("--group <group>", "only this device group's (id or name)")
      .addOption(new Option("--state <state>", "only those in this state").choices(ROLLOUT_STATES)),
  ).action(async (options: InApplication & { group?: string; state?: RolloutState }) => {
    const { client } = await context.connect();
    const application = await resolveApplication(client, options.application, options.team);
    const list =
      options.group === undefined
        ? await client.rollouts.ofApplication.query({
            applicationId: application.id,
            state: options.state,
          })
        : await client.rollouts.ofGroup.query({
            applicationId: application.id,
            groupId: (await resolveDeviceGroup(client, application, options.group)).id,
            state: options.state,
          });
    if (options.json) return context.print(json(list));
    context.print(
      list.rollouts.length === 0
        ? "No rollouts.\n"
        : table(list.rollouts, [
            { header: "ID", value: (r) => r.id },
            { header: "STATE", value: (r) => words(r.state) },
            { header: "SNAPSHOT", value: (r) => r.snapshot.name },
            { header: "TARGET", value: (r) => r.deviceGroup?.name ?? "devices" },
            { header: "DEVICES", value: (r) => String(r.deviceCount) },
            { header: "WAVE", value: (r) => `${r.currentWave + 1}/${r.waveCount}` },
            { header: "CREATED", value: (r) => when(r.createdAt) },
          ]),
    );
  });

  withJson(
    onRollout(rollouts, "show", [
      { does: "A rollout, its waves and its devices", run: "rollouts show R1a2b3c4d5e6" },
    ]).description("A rollout: its settings, state, waves and devices (viewers and up)"),
  ).action(async (given: string, options: OnRollout) => {
    const { client } = await context.connect();
    const rollout = await resolveRollout(client, given, options.team);
    context.print(options.json ? json(rollout) : describe(rollout));
  });
}

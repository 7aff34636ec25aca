// `flowplane pipelines`: an application's delivery pipelines, their stages (each a hosted instance,
// in order), and deploying a stage to the next one — with `--wait`, until the deploy is done. A
// pipeline, an application or an instance is named by id or name in --team or else in all the
// caller's teams; a stage by id or name in its pipeline; a snapshot by id or name (resolve.ts).
import type { Operation, Pipeline, PipelineStage, StageAction } from "@flowplane/contract";
import { type Command, InvalidArgumentError } from "commander";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "../client";
import type { Context } from "../context";
import { CliError } from "../errors";
import { type Column, fields, json, table } from "../output";
import { withExamples } from "./examples";
import { withJson, withTeam, withYes } from "./options";
import {
  resolveApplication,
  resolveInstance,
  resolvePipeline,
  resolveSnapshot,
  resolveStage,
  resolveTeam,
} from "../resolve";
import { targetSet } from "./targets";

const ACTIONS: readonly StageAction[] = [
  "create_snapshot",
  "use_latest_snapshot",
  "prompt",
  "none",
  "use_active_snapshot",
];

function action(value: string): StageAction {
  if (!ACTIONS.includes(value as StageAction)) {
    throw new InvalidArgumentError(`Not an action: give one of ${ACTIONS.join(", ")}.`);
  }
  return value as StageAction;
}

/** Whose target snapshot a deploy to this stage sets, if any, and who deploys it. */
function targetOf(
  stage?: PipelineStage,
): [string, "the device" | "each of its devices"] | undefined {
  const [device] = stage?.devices ?? [];
  const [group] = stage?.deviceGroups ?? [];
  const [instance] = stage?.instances ?? [];
  if (device) return [`device ${device.name}'s`, "the device"];
  if (group) return [`device group ${group.name}'s`, "each of its devices"];
  if (instance && stage?.deployToDevices) {
    return [`instance ${instance.name}'s devices'`, "each of its devices"];
  }
  return undefined;
}

const stageInstance = (stage: PipelineStage) => stage.instances[0]?.name ?? "(none)";

const PIPELINE_COLUMNS: Column<Pipeline>[] = [
  { header: "ID", value: (pipeline) => pipeline.id },
  { header: "NAME", value: (pipeline) => pipeline.name },
  { header: "APPLICATION", value: (pipeline) => pipeline.application?.name ?? "" },
  {
    header: "STAGES",
    value: (pipeline) => pipeline.stages.map((stage) => stage.name).join(" → ") || "(none)",
  },
];

const STAGE_COLUMNS: Column<PipelineStage>[] = [
  { header: "ID", value: (stage) => stage.id },
  { header: "NAME", value: (stage) => stage.name },
  { header: "INSTANCE", value: stageInstance },
  { header: "ACTION", value: (stage) => stage.action },
  { header: "NEXT", value: (stage) => stage.NextStageId ?? "(last)" },
];

interface Options {
  team?: string;
  json?: boolean;
}

/** How often `deploy --wait` asks, and for how long at most. */
const POLL_MS = 500;
const WAIT_MS = 15 * 60_000;

async function awaitOperation(client: Client, operation: Operation): Promise<Operation> {
  const deadline = Date.now() + WAIT_MS;
  let current = operation;
  while (current.status === "pending") {
    if (Date.now() > deadline) {
      throw new CliError(`the deploy ${operation.id} is still running`, "still_pending");
    }
    await sleep(POLL_MS);
    current = await client.pipelines.operation.query({ operationId: current.id });
  }
  return current;
}

export function addPipelinesCommands(program: Command, context: Context): void {
  const pipelines = program
    .command("pipelines")
    .description("Delivery pipelines: stages of an application's instances, and deploying them");
  const optionalTeam = {
    required: false,
    description: "the team, by id, slug or name (default: look in all your teams)",
  };

  withJson(
    withTeam(
      withExamples(pipelines.command("list"), [
        { does: "The team's pipelines and their stages", run: "pipelines list --team night" },
      ])
        .description("The team's pipelines, or one application's (viewers and up)")
        .option("--application <application>", "only this application's (id or name)"),
    ),
  ).action(async (options: Options & { application?: string }) => {
    const { client } = await context.connect();
    const list = options.application
      ? await client.pipelines.ofApplication.query({
          applicationId: (await resolveApplication(client, options.application, options.team)).id,
        })
      : await client.pipelines.ofTeam.query({
          teamId: (await resolveTeam(client, options.team!)).id,
        });
    context.print(
      options.json
        ? json(list)
        : list.count === 0
          ? "No pipelines.\n"
          : table(list.pipelines, PIPELINE_COLUMNS),
    );
  });

  withJson(
    withTeam(
      withExamples(pipelines.command("show"), [
        { does: "A pipeline's stages in order", run: "pipelines show P1a2b3c4d5e6" },
      ])
        .description("A pipeline and its stages in order (viewers and up)")
        .argument("<pipeline>", "the pipeline's id or name"),
      optionalTeam,
    ),
  ).action(async (given: string, options: Options) => {
    const { client } = await context.connect();
    const { id: pipelineId } = await resolvePipeline(client, given, options.team);
    const pipeline = await client.pipelines.get.query({ pipelineId });
    if (options.json) return context.print(json(pipeline));
    context.print(
      fields([
        ["Pipeline", `${pipeline.name} (${pipeline.id})`],
        ["Application", pipeline.application?.name ?? ""],
      ]) + (pipeline.stages.length === 0 ? "No stages.\n" : table(pipeline.stages, STAGE_COLUMNS)),
    );
  });

  withJson(
    withTeam(
      withExamples(pipelines.command("create"), [
        {
          does: "A pipeline in an application",
          run: "pipelines create Release --application A1b2c3d4e5f6",
        },
      ])
        .description("Create a pipeline in an application (owners)")
        .argument("<name>", "its name")
        .requiredOption(
          "--application <application>",
          "the application whose instances it deploys (id or name)",
        ),
      optionalTeam,
    ),
  ).action(async (name: string, options: Options & { application: string }) => {
    const { client } = await context.connect();
    const created = await client.pipelines.create.mutate({
      applicationId: (await resolveApplication(client, options.application, options.team)).id,
      name,
    });
    context.print(
      options.json ? json(created) : `Created pipeline ${created.name} (${created.id}).\n`,
    );
  });

  withJson(
    withTeam(
      withExamples(pipelines.command("rename"), [
        { does: "Rename a pipeline", run: "pipelines rename P1a2b3c4d5e6 Ship" },
      ])
        .description("Rename a pipeline (owners)")
        .argument("<pipeline>", "the pipeline's id or name")
        .argument("<name>", "its new name"),
      optionalTeam,
    ),
  ).action(async (given: string, name: string, options: Options) => {
    const { client } = await context.connect();
    const found = await resolvePipeline(client, given, options.team);
    const renamed = await client.pipelines.update.mutate({
      pipelineId: found.id,
      pipeline: { name },
    });
    context.print(
      options.json
        ? json(renamed)
        : `Renamed pipeline ${found.name} (id ${found.id}) to ${renamed.name}.\n`,
    );
  });

  withJson(
    withYes(
      withTeam(
        withExamples(pipelines.command("delete"), [
          {
            does: "Delete a pipeline and its stages, from a script",
            run: "pipelines delete P1a2b3c4d5e6 --yes",
          },
        ])
          .description(
            "Delete a pipeline and its stages (owners); its instances and snapshots stay. Asked at the terminal first; without one, only with --yes.",
          )
          .argument("<pipeline>", "the pipeline's id or name"),
        optionalTeam,
      ),
      "delete",
    ),
  ).action(async (given: string, options: Options & { yes?: boolean }, command: Command) => {
    if (!options.yes && !context.canAsk()) {
      command.error(
        "error: pipelines delete asks before it deletes, and no terminal is there to answer: give --yes to delete without asking",
        { exitCode: 2 },
      );
    }
    const { client } = await context.connect();
    const found = await resolvePipeline(client, given, options.team);
    const named = `pipeline ${found.name} (id ${found.id})`;
    if (!options.yes && !(await context.confirm(`Delete ${named} and its stages?`))) {
      throw new CliError(`${found.name} was not deleted`, "not_confirmed");
    }
    const result = await client.pipelines.delete.mutate({ pipelineId: found.id });
    context.print(options.json ? json(result) : `Deleted ${named}.\n`);
  });

  const stages = pipelines
    .command("stages")
    .description("Add, change and delete a pipeline's stages");

  withJson(
    withTeam(
      withExamples(stages.command("add"), [
        {
          does: "The first stage: an instance named line-dev",
          run: "pipelines stages add P1a2b3c4d5e6 Development --instance line-dev --team night",
        },
        {
          does: "A stage after another, deploying the newest snapshot on",
          run: "pipelines stages add P1a2b3c4d5e6 Production --instance line-prod --after S1a2b3c4d5e6 --team night",
        },
      ])
        .description(
          "Add a stage after another (owners); without --after, the first of an empty pipeline",
        )
        .argument("<pipeline>", "the pipeline's id or name")
        .argument("<name>", "the stage's name")
        .requiredOption("--instance <instance>", "its instance, by id or name")
        .option("--after <stage>", "the stage it follows (id or name)")
        .option("--action <action>", `what a deploy from it sends: ${ACTIONS.join(", ")}`, action)
        .option(
          "--deploy-to-devices",
          "a snapshot deployed here also becomes the instance's devices' target",
        ),
      optionalTeam,
    ),
  ).action(
    async (
      given: string,
      name: string,
      options: Options & {
        instance: string;
        after?: string;
        action?: StageAction;
        deployToDevices?: boolean;
      },
    ) => {
      const { client } = await context.connect();
      const pipeline = await resolvePipeline(client, given, options.team);
      const stage = await client.pipelines.addStage.mutate({
        pipelineId: pipeline.id,
        name,
        instanceId: (await resolveInstance(client, options.instance, options.team)).id,
        source: options.after && (await resolveStage(pipeline, options.after)).id,
        action: options.action,
        deployToDevices: options.deployToDevices,
      });
      context.print(options.json ? json(stage) : `Added stage ${stage.name} (${stage.id}).\n`);
    },
  );

  withJson(
    withTeam(
      withExamples(stages.command("update"), [
        {
          does: "Deploy a chosen snapshot from this stage",
          run: "pipelines stages update P1a2b3c4d5e6 S1a2b3c4d5e6 --action prompt",
        },
      ])
        .description("Change a stage's name, instance or action (owners)")
        .argument("<pipeline>", "the pipeline's id or name")
        .argument("<stage>", "the stage's id or name")
        .option("--name <name>", "a new name")
        .option("--instance <instance>", "another instance, by id or name")
        .option("--action <action>", `what a deploy from it sends: ${ACTIONS.join(", ")}`, action)
        .option("--deploy-to-devices", "a snapshot deployed here also becomes its devices' target")
        .option("--no-deploy-to-devices", "it does not"),
      optionalTeam,
    ),
  ).action(
    async (
      given: string,
      givenStage: string,
      options: Options & {
        name?: string;
        instance?: string;
        action?: StageAction;
        deployToDevices?: boolean;
      },
    ) => {
      const { client } = await context.connect();
      const pipeline = await resolvePipeline(client, given, options.team);
      const stage = await client.pipelines.updateStage.mutate({
        pipelineId: pipeline.id,
        stageId: (await resolveStage(pipeline, givenStage)).id,
        name: options.name,
        instanceId:
          options.instance && (await resolveInstance(client, options.instance, options.team)).id,
        action: options.action,
        deployToDevices: options.deployToDevices,
      });
      context.print(options.json ? json(stage) : `Updated stage ${stage.name} (${stage.id}).\n`);
    },
  );

  withJson(
    withYes(
      withTeam(
        withExamples(stages.command("delete"), [
          {
            does: "Delete a stage; the one before it then leads to the one after",
            run: "pipelines stages delete P1a2b3c4d5e6 S1a2b3c4d5e6 --yes",
          },
        ])
          .description(
            "Delete a stage (owners). Asked at the terminal first; without one, only with --yes.",
          )
          .argument("<pipeline>", "the pipeline's id or name")
          .argument("<stage>", "the stage's id or name"),
        optionalTeam,
      ),
      "delete",
    ),
  ).action(
    async (
      given: string,
      givenStage: string,
      options: Options & { yes?: boolean },
      command: Command,
    ) => {
      if (!options.yes && !context.canAsk()) {
        command.error(
          "error: pipelines stages delete asks before it deletes, and no terminal is there to answer: give --yes to delete without asking",
          { exitCode: 2 },
        );
      }
      const { client } = await context.connect();
      const pipeline = await resolvePipeline(client, given, options.team);
      const stage = await resolveStage(pipeline, givenStage);
      const named = `stage ${stage.name} (id ${stage.id}) of pipeline ${pipeline.name}`;
      if (!options.yes && !(await context.confirm(`Delete ${named}?`))) {
        throw new CliError(`${stage.name} was not deleted`, "not_confirmed");
      }
      const result = await client.pipelines.deleteStage.mutate({
        pipelineId: pipeline.id,
        stageId: stage.id,
      });
      context.print(options.json ? json(result) : `Deleted ${named}.\n`);
    },
  );

  withJson(
    withTeam(
      withExamples(pipelines.command("deploy"), [
        {
          does: "Deploy a stage to the next one and wait until it is done",
          run: "pipelines deploy P1a2b3c4d5e6 S1a2b3c4d5e6 --wait",
        },
        {
          does: "Deploy a chosen snapshot (a stage whose action is prompt)",
          run: "pipelines deploy P1a2b3c4d5e6 S1a2b3c4d5e6 --snapshot N1a2b3c4d5e6 --wait",
        },
      ])
        .description(
          "Deploy a stage's snapshot to the next stage's instance (owners). Without --wait it returns once the deploy has started, printing the operation to follow; with --wait it returns when the deploy is done, and fails (exit 1) when the deploy did.",
        )
        .argument("<pipeline>", "the pipeline's id or name")
        .argument("<stage>", "the stage to deploy from (id or name)")
        .option(
          "--snapshot <snapshot>",
          "the snapshot to deploy, by id or name (required when the stage's action is prompt)",
        )
        .option("--wait", "wait until the deploy is done"),
      optionalTeam,
    ),
  ).action(
    async (
      given: string,
      givenStage: string,
      options: Options & { snapshot?: string; wait?: boolean },
    ) => {
      const { client } = await context.connect();
      const pipeline = await resolvePipeline(client, given, options.team);
      const source = await resolveStage(pipeline, givenStage);
      const snapshot =
        options.snapshot === undefined || !pipeline.application
          ? options.snapshot
          : (await resolveSnapshot(client, { application: pipeline.application }, options.snapshot))
              .id;
      const started = await client.pipelines.deploy.mutate({
        pipelineId: pipeline.id,
        stageId: source.id,
        sourceSnapshotId: snapshot,
      });
      if (!started.operation) {
        context.print(
          options.json ? json(started) : "Nothing to deploy: the stage's action is none.\n",
        );
        return;
      }
      if (!options.wait) {
        context.print(
          options.json
            ? json(started)
            : `Deploying (operation ${started.operation.id}); follow it with GET /api/v1/operations/${started.operation.id}, or deploy with --wait.\n`,
        );
        return;
      }
      context.tell(`Deploying (operation ${started.operation.id}) …`);
      const done = await awaitOperation(client, started.operation);
      if (options.json) context.print(json(done));
      if (done.status === "failed") {
        throw new CliError(
          `the deploy failed: ${done.error?.error ?? ""}`,
          done.error?.code ?? "deploy_failed",
        );
      }
      if (!options.json) {
        context.print(
          `Deployed ${done.snapshot?.name ?? "the snapshot"} from ${done.sourceStage.name} to ${done.targetStage.name}.\n`,
        );
        const target = targetOf(pipeline.stages.find((s) => s.id === source.NextStageId));
        if (target && done.snapshot) context.print(targetSet(...target, done.snapshot));
      }
    },
  );
}

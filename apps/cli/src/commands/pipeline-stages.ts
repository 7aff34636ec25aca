// `flowplane pipelines stages`: a pipeline's stages added (each a hosted instance, after another
// or first), changed (name, instance, action, deploy to devices) and deleted (asked first).
import type { StageAction } from "@flowplane/contract";
import { type Command, InvalidArgumentError } from "commander";
import type { Context } from "../context";
import { json } from "../output";
import { withExamples } from "./examples";
import { teamCommand, withJson, withTeamToLookIn, withYes } from "./options";
import { resolveInstance, resolvePipeline, resolveStage } from "../resolve";
import { confirmOrStop, refuseUnanswerable } from "./ask-first";

type Options = { team?: string; json?: boolean };

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

/** `pipelines stages add|update|delete`, under the `pipelines` group. */
export function addPipelineStagesCommands(pipelines: Command, context: Context): void {
  const stages = pipelines
    .command("stages")
    .description("Add, change and delete a pipeline's stages");

  teamCommand(
    stages,
    "add",
    [
      {
        does: "The first stage: an instance named line-dev",
        run: "pipelines stages add P1a2b3c4d5e6 Development --instance line-dev --team night",
      },
      {
        does: "A stage after another, deploying the newest snapshot on",
        run: "pipelines stages add P1a2b3c4d5e6 Production --instance line-prod --after S1a2b3c4d5e6 --team night",
      },
    ],
    (command) =>
      command
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
    { lookIn: "the team" },
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

  teamCommand(
    stages,
    "update",
    [
      {
        does: "Deploy a chosen snapshot from this stage",
        run: "pipelines stages update P1a2b3c4d5e6 S1a2b3c4d5e6 --action prompt",
      },
    ],
    (command) =>
      command
        .description("Change a stage's name, instance or action (owners)")
        .argument("<pipeline>", "the pipeline's id or name")
        .argument("<stage>", "the stage's id or name")
        .option("--name <name>", "a new name")
        .option("--instance <instance>", "another instance, by id or name")
        .option("--action <action>", `what a deploy from it sends: ${ACTIONS.join(", ")}`, action)
        .option("--deploy-to-devices", "a snapshot deployed here also becomes its devices' target")
        .option("--no-deploy-to-devices", "it does not"),
    { lookIn: "the team" },
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
      withTeamToLookIn(
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
        "the team",
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
      refuseUnanswerable(context, command, options.yes);
      const { client } = await context.connect();
      const pipeline = await resolvePipeline(client, given, options.team);
      const stage = await resolveStage(pipeline, givenStage);
      const named = `stage ${stage.name} (id ${stage.id}) of pipeline ${pipeline.name}`;
      if (!options.yes) {
        await confirmOrStop(context, `Delete ${named}?`, `${stage.name} was not deleted`);
      }
      const result = await client.pipelines.deleteStage.mutate({
        pipelineId: pipeline.id,
        stageId: stage.id,
      });
      context.print(options.json ? json(result) : `Deleted ${named}.\n`);
    },
  );
}

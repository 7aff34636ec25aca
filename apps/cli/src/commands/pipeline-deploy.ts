// `flowplane pipelines deploy`: deploying a stage to the next one — with `--wait`, polling the
// deploy's operation until it is done, and saying whose target snapshot it set.
import type { Operation, PipelineStage } from "@flowplane/contract";
import type { Command } from "commander";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "../client";
import type { Context } from "../context";
import { CliError } from "../errors";
import { json } from "../output";
import { teamCommand } from "./options";
import { resolvePipeline, resolveSnapshot, resolveStage } from "../resolve";
import { targetSet } from "./targets";

type Options = { team?: string; json?: boolean };

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

/** `pipelines deploy`, under the `pipelines` group. */
export function addPipelineDeployCommand(pipelines: Command, context: Context): void {
  teamCommand(
    pipelines,
    "deploy",
    [
      {
        does: "Deploy a stage to the next one and wait until it is done",
        run: "pipelines deploy P1a2b3c4d5e6 S1a2b3c4d5e6 --wait",
      },
      {
        does: "Deploy a chosen snapshot (a stage whose action is prompt)",
        run: "pipelines deploy P1a2b3c4d5e6 S1a2b3c4d5e6 --snapshot N1a2b3c4d5e6 --wait",
      },
    ],
    (command) =>
      command
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
    { lookIn: "the team" },
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

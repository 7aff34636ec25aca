// A deploy from a pipeline stage to the next: checked in full before anything is made (a last
// stage, a stage without an instance, a missing snapshot are refused at once), then run in the
// background as an operation the caller can await (GET /api/v1/operations/{id}). The source
// snapshot (taken now, the newest, or the one named, by the stage's action) is copied to the target
// instance as a snapshot of its own and applied as one action on that instance (instances/
// runtime.ts `replace`: after any action under way, so concurrent deploys to one target run one
// after the other; if Node-RED does not start on it, the target gets back what it ran). A device
// group or device target gets the snapshot as its target snapshot: its devices (the group's
// members) are told at their next check-in (409 naming it) and download it.
//
// This file holds the procedures (the deploy, and the operation a client awaits); the plan is in
// deploy-plan.ts, the run in deploy-run.ts, the deploys under way in background-deploys.ts.
import { DeployStageInput, DeployStarted, Operation, OperationIdInput } from "@flowplane/contract";
import {
  findOperation,
  finishOperation,
  insertOperation,
  pendingOperationFor,
  isUniqueViolation,
} from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { actorOf, procedure } from "../core/trpc";
import { deployError, plan } from "./deploy-plan";
import { run } from "./deploy-run";
import { recordStageDeployRunFailed, recordStageDeployStarted } from "./events";
import { type DeploySubject, operationView } from "./views";

const TAG = "Pipelines";

/** Deploying a stage, and the operation a client awaits. */
export const deployProcedures = {
  deploy: procedure
    .meta({
      permission: "pipeline:edit",
      errors: [409],
      openapi: {
        method: "PUT",
        path: "/api/v1/pipelines/{pipelineId}/stages/{stageId}/deploy",
        tags: [TAG],
        summary: "Deploy a stage to the next one (owners)",
        description:
          "Sends the stage's snapshot — taken now (`create_snapshot`), its instance's newest (`use_latest_snapshot`), or `sourceSnapshotId` (`prompt`) — to the next stage. An instance gets its flows, its credentials (encrypted with the target's own secret), its settings and modules; the target keeps the values of the variables it has and gets those it lacks (FlowFuse's copy rules). The target gets the snapshot as one of its own (`project.snapshot.imported`) and, when running, restarts on it; if it does not start, it gets back what it ran and the deploy fails. Deploys to one instance run one after the other. A device group (or device) gets the snapshot as its target snapshot: its members (the device) are told at their next check-in (409 naming it) and run it. Deploying from a device or device group stage is not supported (400 `invalid_source_instance`). Everything is checked before anything is made: the last stage is 404 `Target stage not found` (no snapshot taken), a source stage without an instance 400 `invalid_source_instance`, a target stage without its instance, group or device 400 `invalid_target_stage`, a snapshot that is not the source instance's 400 `invalid_source_snapshot`. Answers `{ status: \"importing\" }` at once, as FlowFuse, and also `operation`: await `GET /api/v1/operations/{operationId}` for `succeeded` or `failed` with the error. A stage whose action is `none` answers `{ status: \"okay\" }` and does nothing. A device group or device takes one deploy at a time: another to it while one is pending is 409 `deploy_in_progress` naming the operation under way. A deploy whose platform process stopped before it finished is failed a minute later (`deploy_interrupted`, and `application.pipeline.stage-deploy-failed` in the audit log), not left pending. Audit event `application.pipeline.stage-deployed`, or `application.pipeline.stage-deploy-failed` (with `reason`) when the deploy fails; the target stage's webhook (`webhookId`) gets either.",
      },
    })
    .input(DeployStageInput)
    .output(DeployStarted)
    .mutation(async ({ ctx, input }) => {
      const checked = await plan(ctx, input);
      if (checked.none) return { status: "okay" as const };
      const deploy = checked.plan;
      const subject: DeploySubject = {
        pipeline: { id: deploy.pipeline.id, name: deploy.pipeline.name },
        sourceStage: { id: deploy.source.id, name: deploy.source.name },
        targetStage: { id: deploy.target.id, name: deploy.target.name },
        ...(deploy.snapshot && {
          snapshot: { id: deploy.snapshot.id, name: deploy.snapshot.name },
        }),
      };
      // A device group or device takes one deploy at a time (an instance's run one after the
      // other, through its action claim): a second while one is pending would race it.
      const target = deploy.targetGroup
        ? `group:${deploy.targetGroup.id}`
        : deploy.targetDevice
          ? `device:${deploy.targetDevice.id}`
          : undefined;
      const operation = await ctx.db
        .transaction()
        .execute(async (trx) => {
          const started = await insertOperation(trx, {
            teamId: deploy.pipeline.team_id,
            kind: "pipeline.deploy",
            subject: subject as unknown as Record<string, unknown>,
            userId: ctx.auth.userId,
            target,
          });
          await recordStageDeployStarted(trx, actorOf(ctx), deploy);
          return started;
        })
        .catch(async (error: unknown) => {
          if (!target || !isUniqueViolation(error)) throw error;
          const under = await pendingOperationFor(ctx.db, target);
          throw deployError(
            409,
            "deploy_in_progress",
            `Another deploy to this ${deploy.targetGroup ? "device group" : "device"} is under way${under ? ` (operation ${under.id})` : ""}: wait for it to finish, then deploy again`,
          );
        });
      const runner = ctx.deploys;
      const work = async () => {
        try {
          await run(ctx, operation.id, deploy);
          await finishOperation(ctx.db, operation.id, { status: "succeeded" });
        } catch (error) {
          const known = error instanceof ApiError;
          if (!known) ctx.log.error({ err: error, operationId: operation.id }, "a deploy failed");
          // The outcome and its event together, once: a sweep that failed it first wrote its own.
          await ctx.db
            .transaction()
            .execute(async (trx) => {
              const ended = await finishOperation(trx, operation.id, {
                status: "failed",
                code: known ? error.apiCode : "deploy_failed",
                message: known ? error.message : "The deploy failed",
              });
              if (ended) await recordStageDeployRunFailed(trx, actorOf(ctx), deploy, ended);
            })
            .catch((failure: unknown) =>
              ctx.log.error(
                { err: failure, operationId: operation.id },
                "a deploy's outcome was not saved",
              ),
            );
        }
      };
      if (runner) runner.run(operation.id, work);
      else void work();
      return { status: "importing" as const, operation: operationView(operation) };
    }),

  operation: procedure
    .meta({
      permission: "operation:read",
      openapi: {
        method: "GET",
        path: "/api/v1/operations/{operationId}",
        tags: [TAG],
        summary: "What a deploy did: pending, succeeded or failed (viewers and up)",
        description:
          'Flowplane\'s (FlowFuse answers a deploy with `{ status: "importing" }` and nothing to await). `status` is `pending` while the deploy runs, then `succeeded`, or `failed` with `error` (`code`, `error`). Poll it; `flowplane pipelines deploy --wait` does.',
      },
    })
    .input(OperationIdInput)
    .output(Operation)
    .query(async ({ ctx, input }) => {
      const row = await findOperation(ctx.db, input.operationId);
      if (!row) throw notFound();
      return operationView(row);
    }),
};

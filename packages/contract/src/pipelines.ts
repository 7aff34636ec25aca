// Delivery pipelines (FlowFuse's DevOps pipelines): an application's ordered stages, each with a
// target (a hosted instance, a device group or a device), through which a snapshot
// moves from one stage to the next; and the operations a deploy runs as, which a client awaits.
import { z } from "zod";
import { Id, Name, Timestamp } from "./common";
import { DeviceGroupSummary } from "./device-groups";
import { DeviceSummary } from "./devices";
import { InstanceSummary } from "./instances";

export const StageAction = z
  .enum(["create_snapshot", "use_active_snapshot", "use_latest_snapshot", "prompt", "none"])
  .describe(
    "What a deploy from this stage sends on: `create_snapshot` (default) a new snapshot of the stage's instance; `use_latest_snapshot` its newest snapshot; `prompt` the one the deploy names (`sourceSnapshotId`); `none` nothing (the deploy does nothing); `use_active_snapshot` is for device stages only (FlowFuse's rule; a deploy from a device or device group stage is not supported yet)",
  );
export type StageAction = z.infer<typeof StageAction>;

export const PipelineStage = z
  .object({
    id: Id,
    name: z.string(),
    action: StageAction,
    deployToDevices: z
      .boolean()
      .describe(
        "Instance stages: a snapshot deployed here also becomes the instance's devices' target",
      ),
    instances: z
      .array(InstanceSummary)
      .describe("An instance stage's hosted instance (one; none once that instance was deleted)"),
    deviceGroups: z
      .array(DeviceGroupSummary)
      .describe("A device group stage's group (one; none once that group was deleted)"),
    devices: z
      .array(DeviceSummary)
      .describe("A device stage's device (one; none once that device was deleted)"),
    webhookId: Id.nullable().describe(
      "The team's webhook told the outcome of each deploy into this stage (null: none)",
    ),
    NextStageId: Id.optional().describe(
      "The stage a deploy from this one goes to; absent on the last",
    ),
  })
  .meta({ id: "PipelineStage" });
export type PipelineStage = z.infer<typeof PipelineStage>;

export const Pipeline = z
  .object({
    id: Id,
    name: z.string(),
    stages: z
      .array(PipelineStage)
      .describe("In order: each stage's `NextStageId` is the next one's id"),
    application: z
      .object({ id: Id, name: z.string() })
      .optional()
      .describe("The pipeline's application (in the team's list)"),
  })
  .meta({ id: "Pipeline" });
export type Pipeline = z.infer<typeof Pipeline>;

export const PipelineList = z
  .object({ count: z.number().int(), pipelines: z.array(Pipeline) })
  .meta({ id: "PipelineList" });

export const PipelineIdInput = z.strictObject({ pipelineId: Id });
export const PipelineStageIdInput = z.strictObject({ pipelineId: Id, stageId: Id });

export const CreatePipelineInput = z.strictObject({
  applicationId: Id.describe("The application whose instances its stages deploy to"),
  name: Name,
});

export const UpdatePipelineInput = z.strictObject({
  pipelineId: Id,
  pipeline: z
    .strictObject({ name: Name })
    .describe("FlowFuse reads the new name from `pipeline.name`; so does Flowplane"),
});

const StageFields = {
  name: Name,
  instanceId: Id.optional().describe(
    "The hosted instance the stage deploys to: one of the pipeline's application. A stage has exactly one of `instanceId`, `deviceGroupId`, `deviceId`",
  ),
  deviceGroupId: Id.optional().describe(
    "The device group the stage deploys to (its target snapshot): one of the pipeline's application",
  ),
  deviceId: Id.optional().describe(
    "The device the stage deploys to (its target snapshot): one of the pipeline's application",
  ),
  action: StageAction.optional(),
  deployToDevices: z.boolean().optional(),
  webhookId: Id.nullable()
    .optional()
    .describe(
      "A webhook of the pipeline's team that gets the outcome of each deploy into this stage (`application.pipeline.stage-deployed` or `stage-deploy-failed`), whatever types it subscribes to; null clears",
    ),
};

export const CreatePipelineStageInput = z.strictObject({
  pipelineId: Id,
  ...StageFields,
  source: Id.optional().describe(
    "The stage the new one follows (FlowFuse's `source`): it is linked in after it. None: the pipeline's first stage, allowed only while it has none",
  ),
});

export const UpdatePipelineStageInput = z.strictObject({
  pipelineId: Id,
  stageId: Id,
  name: Name.optional(),
  instanceId: StageFields.instanceId.describe(
    "A new target: give one of `instanceId`, `deviceGroupId`, `deviceId` and it replaces the stage's",
  ),
  deviceGroupId: StageFields.deviceGroupId,
  deviceId: StageFields.deviceId,
  action: StageFields.action,
  deployToDevices: StageFields.deployToDevices,
  webhookId: StageFields.webhookId,
});

export const DeployStageInput = z.strictObject({
  pipelineId: Id,
  stageId: Id,
  sourceSnapshotId: Id.optional().describe(
    "The snapshot to deploy, one of the stage's instance's: required when the stage's action is `prompt`; given with another action, it is deployed instead of what the action would choose",
  ),
});

export const OperationStatus = z.enum(["pending", "succeeded", "failed"]);

export const Operation = z
  .object({
    id: Id,
    kind: z.literal("pipeline.deploy").describe("What the operation does"),
    status: OperationStatus.describe("`pending` while it runs; then `succeeded` or `failed`"),
    error: z
      .object({ code: z.string(), error: z.string() })
      .nullable()
      .describe("Why it failed (as an API error's `code` and `error`); null otherwise"),
    pipeline: z.object({ id: Id, name: z.string() }),
    sourceStage: z.object({ id: Id, name: z.string() }),
    targetStage: z.object({ id: Id, name: z.string() }),
    snapshot: z
      .object({ id: Id, name: z.string() })
      .nullable()
      .describe("The snapshot deployed, once it is known"),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    finishedAt: Timestamp.nullable(),
  })
  .meta({ id: "Operation" });
export type Operation = z.infer<typeof Operation>;

export const OperationIdInput = z.strictObject({ operationId: Id });

export const DeployStarted = z
  .object({
    status: z
      .enum(["importing", "okay"])
      .describe(
        "`importing`: the deploy runs on (FlowFuse's answer); `okay`: the stage's action is `none`, nothing to do",
      ),
    operation: Operation.optional().describe(
      "The deploy, to await at `GET /api/v1/operations/{operationId}` (absent with `okay`)",
    ),
  })
  .meta({ id: "DeployStarted" });

// What a person asks a device's agent to do with its Node-RED (FlowFuse's
// /devices/{id}/actions/{restart|suspend|start}): the `action` command over the devices' MQTT
// channel, answered once the agent replies. Each ask is audited, done or failed, as FlowFuse logs
// it (`device.restarted`, `device.restart-failed` …).
import { DeviceIdInput, Status } from "@flowplane/contract";
import { ApiError } from "../core/errors";
import { actorOf, type Context, procedure } from "../core/trpc";
import { type DeviceChannel } from "./channel";
import { recordDeviceEvent } from "./events";
import { deviceOf, TAG } from "./procedures";

export type DeviceAction = "restart" | "suspend" | "start";

/** The audit events of each action: done, and failed (FlowFuse's names). */
const EVENTS = {
  restart: ["device.restarted", "device.restart-failed"],
  suspend: ["device.suspended", "device.suspend-failed"],
  start: ["device.started", "device.start-failed"],
} as const;

/** What the agent answers an `action` (its lib/mqtt.js): `{ success }`, or why it failed. */
interface ActionReply {
  success?: unknown;
  error?: { code?: unknown; error?: unknown };
}

/** The devices' channel, or FlowFuse's 400 when the platform has no broker to reach them by. */
export function channelOf(ctx: Context): DeviceChannel {
  if (!ctx.deviceChannel) {
    throw new ApiError(
      400,
      "no_device_comms",
      "The platform has no broker: devices are not reachable live",
    );
  }
  return ctx.deviceChannel;
}

/** The agent's answer as an error, when it is not a success (FlowFuse's codes by default). */
function failureOf(action: DeviceAction, reply: unknown): ApiError | undefined {
  const answer = (typeof reply === "object" && reply !== null ? reply : {}) as ActionReply;
  if (answer.success === true) return undefined;
  // The agent's words are the tenant's: a code of the usual shape, and a message cut to size.
  const given = answer.error?.code;
  const code =
    typeof given === "string" && /^[a-z][a-z0-9_]{0,63}$/.test(given) ? given : `${action}_failed`;
  const message =
    typeof answer.error?.error === "string"
      ? answer.error.error.slice(0, 500)
      : `The device's agent did not ${action} Node-RED`;
  return new ApiError(400, code, message);
}

async function act(ctx: Context, deviceId: string, action: DeviceAction) {
  const channel = channelOf(ctx);
  const device = await deviceOf(ctx.db, deviceId);
  // FlowFuse refuses these only; a suspended device may be started.
  if (device.state === "suspended" && action !== "start") {
    throw new ApiError(400, "device_suspended", "The device is suspended");
  }
  const [done, failed] = EVENTS[action];
  let error: ApiError | undefined;
  try {
    error = failureOf(
      action,
      await channel.request(device.team_id, device.id, "action", { action }),
    );
  } catch (caught) {
    if (!(caught instanceof ApiError)) throw caught;
    error =
      caught.apiCode === "no_response"
        ? new ApiError(
            400,
            "no_response",
            `The device "${device.name}" did not answer the ${action} request in time`,
          )
        : caught;
  }
  await recordDeviceEvent(
    ctx.db,
    error ? failed : done,
    actorOf(ctx),
    device,
    error ? { error: { code: error.apiCode, error: error.message } } : {},
  );
  if (error) throw error;
  return { status: "okay" as const };
}

function actionProcedure(action: DeviceAction, summary: string, description: string) {
  return procedure
    .meta({
      permission: "device:change-status",
      openapi: {
        method: "POST",
        path: `/api/v1/devices/{deviceId}/actions/${action}`,
        tags: [TAG],
        summary,
        description: `${description} Answers once the device's agent has acted. 400: \`no_device_comms\` when the platform has no broker; \`device_offline\` when the device is not connected; \`no_response\` when it does not answer within 10 s; the agent's own code (\`${action}_failed\` by default) when it fails.`,
      },
    })
    .input(DeviceIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => act(ctx, input.deviceId, action));
}

/** Restart, suspend and start (members). */
export const deviceActionProcedures = {
  restart: actionProcedure(
    "restart",
    "Restart a device's Node-RED (members)",
    "400 `device_suspended` when the device last reported itself suspended.",
  ),
  suspend: actionProcedure(
    "suspend",
    "Suspend a device's Node-RED (members)",
    "Node-RED stops until the device is started again. 400 `device_suspended` when the device last reported itself suspended.",
  ),
  start: actionProcedure(
    "start",
    "Start a device's Node-RED (members)",
    "From suspended or stopped.",
  ),
};

// A device's developer mode and its remote editor (FlowFuse's PUT /devices/{id}/mode and
// /devices/{id}/editor): in developer mode the agent keeps what is deployed in its own editor
// instead of the platform's target; the editor is reached through a tunnel the agent opens to the
// platform when told `startEditor {token}`, the token kept here only as a digest.
import {
  DeviceEditorStatus,
  DeviceIdInput,
  DeviceModeResult,
  SetDeviceEditorInput,
  SetDeviceModeInput,
} from "@flowplane/contract";
import { findDeviceEditor, setDeviceEditorToken, setDeviceMode } from "@flowplane/db";
import { ApiError, notFound } from "../../core/errors";
import { actorOf, type Context, procedure } from "../../core/trpc";
import { recordDeviceEvent } from "../events";
import { TAG } from "../procedures";
import { newTunnelToken } from "./service";

/** How long enabling waits for the agent's tunnel (the agent checks its socket every 2 s). */
const START_EDITOR_TIMEOUT_MS = 20_000;

function editorOf(ctx: Context) {
  if (!ctx.deviceEditor || !ctx.deviceChannel) {
    throw new ApiError(400, "device_offline", "This platform has no broker: devices are not live");
  }
  return { editor: ctx.deviceEditor, channel: ctx.deviceChannel };
}

function statusOf(ctx: Context, deviceId: string, enabled: boolean) {
  const connected = enabled && (ctx.deviceEditor?.tunnels.isConnected(deviceId) ?? false);
  return {
    enabled,
    connected,
    ...(enabled && ctx.deviceEditor && { url: ctx.deviceEditor.openUrl(deviceId) }),
  };
}

/**
 * An event of developer mode or the remote editor, logged twice as FlowFuse does (its team's
 * `team.device.*` and its device's `device.*`), both in the device's own log.
 */
async function recordEditorEvent(
  ctx: Context,
  event: `${"developer-mode" | "remote-access"}.${"enabled" | "disabled"}`,
  device: { id: string; name: string; team_id: string },
  more: Record<string, unknown> = {},
) {
  const actor = actorOf(ctx);
  await recordDeviceEvent(ctx.db, `team.device.${event}`, actor, device, more);
  await recordDeviceEvent(ctx.db, `device.${event}`, actor, device, more);
}

/** The editor closed on the platform's side, and the agent told to stop its tunnel. */
async function closeEditor(ctx: Context, device: { id: string; team_id: string }) {
  ctx.deviceEditor?.end(device.id);
  if (ctx.deviceChannel?.isConnected(device.id)) {
    await ctx.deviceChannel.send(device.team_id, device.id, "stopEditor").catch(() => {});
  }
}

export const deviceEditorProcedures = {
  setMode: procedure
    .meta({
      permission: "device:editor",
      openapi: {
        method: "PUT",
        path: "/api/v1/devices/{deviceId}/mode",
        tags: [TAG],
        summary: "Turn a device's developer mode on or off (members)",
        description:
          "`developer`: the device keeps the flows deployed in its own editor (opened through the platform: PUT /devices/{deviceId}/editor) rather than its target snapshot; `autonomous`: it runs its target again, and its editor's tunnel closes. The device is told at once when connected.",
      },
    })
    .input(SetDeviceModeInput)
    .output(DeviceModeResult)
    .mutation(async ({ ctx, input }) => {
      const mode = input.mode;
      if (mode !== "developer" && mode !== "autonomous") {
        throw new ApiError(400, "invalid_mode", "mode is `developer` or `autonomous`", [
          { path: "mode", message: "`developer` or `autonomous`" },
        ]);
      }
      const before = await setDeviceMode(ctx.db, input.deviceId, mode);
      if (!before) throw notFound();
      if (before.mode !== mode) {
        const event = mode === "developer" ? "enabled" : "disabled";
        await recordEditorEvent(ctx, `developer-mode.${event}`, before);
      }
      // Leaving developer mode closes the editor (the row's token is cleared with the mode).
      if (mode === "autonomous" && before.editor_token_digest !== null) {
        await closeEditor(ctx, before);
      }
      return { mode };
    }),

  editor: procedure
    .meta({
      permission: "device:read",
      openapi: {
        method: "GET",
        path: "/api/v1/devices/{deviceId}/editor",
        tags: [TAG],
        summary: "A device's remote editor: whether it is enabled and connected, and its URL",
        description:
          "`url` is where a person opens the editor: the platform signs them in and sends them to the device's own editor host (viewers read only).",
      },
    })
    .input(DeviceIdInput)
    .output(DeviceEditorStatus)
    .query(async ({ ctx, input }) => {
      const device = await findDeviceEditor(ctx.db, input.deviceId);
      if (!device) throw notFound();
      return statusOf(ctx, device.id, device.editor_token_digest !== null);
    }),

  setEditor: procedure
    .meta({
      permission: "device:editor",
      openapi: {
        method: "PUT",
        path: "/api/v1/devices/{deviceId}/editor",
        tags: [TAG],
        summary: "Open or close a device's remote editor (members)",
        description:
          "`enabled: true` (developer mode only: 400 `developer_mode_required` otherwise; the device connected: 400 `device_offline` otherwise) has the agent open its editor's tunnel to the platform and answers once it is up; 503 `enable_editor_failed` when the agent could not (no Node-RED running). `enabled: false` closes it.",
      },
    })
    .input(SetDeviceEditorInput)
    .output(DeviceEditorStatus)
    .mutation(async ({ ctx, input }) => {
      const device = await findDeviceEditor(ctx.db, input.deviceId);
      if (!device) throw notFound();
      if (!input.enabled) {
        await setDeviceEditorToken(ctx.db, device.id, null);
        await closeEditor(ctx, device);
        await recordEditorEvent(ctx, "remote-access.disabled", device);
        return statusOf(ctx, device.id, false);
      }
      if (device.mode !== "developer") {
        throw new ApiError(
          400,
          "developer_mode_required",
          "The device is not in developer mode: PUT /devices/{deviceId}/mode {mode: 'developer'} first",
        );
      }
      const { editor, channel } = editorOf(ctx);
      if (!channel.isConnected(device.id)) {
        throw new ApiError(400, "device_offline", "The device is not connected");
      }
      // A new token each time: the tunnel open now (if any) is replaced by the one it opens.
      editor.tunnels.close(device.id, 1000, "Replaced");
      const token = newTunnelToken(device.id);
      await setDeviceEditorToken(ctx.db, device.id, editor.digest(token));
      let failure: string | undefined;
      try {
        const reply = (await channel.request(
          device.team_id,
          device.id,
          "startEditor",
          { token },
          START_EDITOR_TIMEOUT_MS,
        )) as { connected?: boolean; error?: string } | undefined;
        if (!reply?.connected) failure = reply?.error ?? "The device's tunnel did not connect";
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
      }
      if (failure !== undefined) {
        await setDeviceEditorToken(ctx.db, device.id, null);
        editor.tunnels.close(device.id);
      }
      await recordEditorEvent(ctx, "remote-access.enabled", device, {
        ...(failure !== undefined && { error: { code: "enable_editor_failed", error: failure } }),
      });
      if (failure !== undefined) {
        throw new ApiError(503, "enable_editor_failed", `The editor did not open: ${failure}`);
      }
      return statusOf(ctx, device.id, true);
    }),
};

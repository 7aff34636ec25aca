// A device's developer mode and its remote editor (FlowFuse's /devices/{id}/mode and
// /devices/{id}/editor): in developer mode the device keeps the flows deployed in its own editor,
// which people open through the platform over a tunnel the agent opens to it.
import { z } from "zod";
import { Id, Text } from "./common";

export const DEVICE_MODES = ["autonomous", "developer"] as const;

export const DeviceMode = z.enum(DEVICE_MODES);

export const SetDeviceModeInput = z.strictObject({
  deviceId: Id,
  mode: Text.max(64).describe("`developer` or `autonomous` (400 `invalid_mode` otherwise)"),
});

export const DeviceModeResult = z.object({ mode: DeviceMode });

export const SetDeviceEditorInput = z.strictObject({
  deviceId: Id,
  enabled: z
    .boolean()
    .describe("true opens the editor's tunnel (developer mode only), false closes it"),
});

export const DeviceEditorStatus = z.object({
  enabled: z.boolean().describe("Whether the device has an editor token (its tunnel is wanted)"),
  connected: z.boolean().describe("Whether the agent's tunnel is connected to the platform now"),
  url: z
    .string()
    .optional()
    .describe("Where a person opens the editor: a platform URL that signs them in to it"),
  error: z.string().optional().describe("Why the tunnel did not open"),
  code: z.string().optional(),
});

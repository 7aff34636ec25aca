// A device's Node-RED log as the platform serves it while someone watches (the agent streams it
// over the devices' MQTT channel only on request): numbered lines, read a page at a time or
// followed as Server-Sent Events; and the actions a person asks its agent for.
import { z } from "zod";
import { Id, Text } from "./common";

export const DeviceLogsInput = z.strictObject({
  deviceId: Id,
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(100)
    .describe("How many lines (1–1000, default 100)"),
  cursor: Text.max(16)
    .regex(/^\d{1,16}$/, "A line's `id`")
    .optional()
    .describe("The lines after the line with this `id` (`meta.next_cursor` of the last page)"),
});

export const DeviceLogLine = z
  .object({
    id: z.number().int().describe("The line's number, in arrival order: `cursor` and SSE's `id`"),
    ts: z.number().int().describe("Milliseconds since the epoch"),
    level: z.string(),
    msg: z.string(),
  })
  .meta({ id: "DeviceLogLine" });

export const DeviceLogs = z
  .object({
    meta: z.object({
      next_cursor: z
        .string()
        .describe("Give it as `cursor` for the lines after these (poll it to follow the log)"),
    }),
    log: z.array(DeviceLogLine),
  })
  .meta({ id: "DeviceLogs" });
export type DeviceLogLine = z.infer<typeof DeviceLogLine>;
export type DeviceLogs = z.infer<typeof DeviceLogs>;

// A device's Node-RED log, read a page at a time (GET /devices/{id}/logs): the lines the platform
// keeps of what the agent streamed (devices/log-buffer.ts). Reading asks the agent to stream for a
// while, so that a script polling `next_cursor` follows the log; the live stream for a person
// watching is logs-stream.ts's.
import { DeviceLogs, DeviceLogsInput } from "@flowplane/contract";
import { procedure } from "../core/trpc";
import { channelOf } from "./actions";
import { LOG_LINES_KEPT } from "./log-buffer";
import { deviceOf, TAG } from "./procedures";

export const deviceLogProcedures = {
  logs: procedure
    .meta({
      permission: "device:read",
      openapi: {
        method: "GET",
        path: "/api/v1/devices/{deviceId}/logs",
        tags: [TAG],
        summary: "A device's Node-RED log (viewers and up)",
        description:
          "The lines the platform keeps of what the device's agent streamed (the last 1,000), oldest first: without `cursor` the newest `limit`, with it the `limit` after that line (a line's `id`); `meta.next_cursor` is the cursor for the lines after these. The agent streams its log only while someone reads or follows it: a read asks it to (it sends the lines it holds, then each new one) and keeps it streaming for 60 s, so the first read of a quiet log may be empty and a script polling `next_cursor` follows the log. A device offline answers what is kept (maybe nothing). To follow it live: `GET /api/v1/devices/{deviceId}/logs/stream` (Server-Sent Events). 400 `no_device_comms` when the platform has no broker.",
      },
    })
    .input(DeviceLogsInput)
    .output(DeviceLogs)
    .query(async ({ ctx, input }) => {
      const channel = channelOf(ctx);
      const device = await deviceOf(ctx.db, input.deviceId);
      const after = input.cursor === undefined ? undefined : Number(input.cursor);
      // Without a cursor, the newest lines: what a person asking for "the log" wants to see.
      const { lines: kept } = await channel.logs.read(
        device.team_id,
        device.id,
        after,
        after === undefined ? LOG_LINES_KEPT : input.limit,
      );
      const lines = after === undefined ? kept.slice(-input.limit) : kept;
      const last = lines.at(-1)?.id ?? after ?? 0;
      return { meta: { next_cursor: String(last) }, log: lines };
    }),
};

// A device's settings (FlowFuse's /devices/{id}/settings): its variables, read by viewers and up
// and changed by members. What the agent gets of them, and their hash, is settings.ts.
import {
  DeviceIdInput,
  DeviceSettings,
  Status,
  UpdateDeviceSettingsInput,
} from "@flowplane/contract";
import { findDevice, updateDevice } from "@flowplane/db";
import { notFound } from "../core/errors";
import { actorOf, procedure } from "../core/trpc";
import { recordDeviceEvent } from "./events";
import { envToStore, visibleDeviceEnv } from "./views";
import { refreshSettingsHashes } from "./settings";
import { TAG, deviceOf } from "./procedures";

/** GET and PUT /devices/{deviceId}/settings. */
export const deviceSettingsProcedures = {
  settings: procedure
    .meta({
      permission: "device:read",
      openapi: {
        method: "GET",
        path: "/api/v1/devices/{deviceId}/settings",
        tags: [TAG],
        summary: "A device's settings (its environment variables)",
        description:
          "`env`: the device's own variables, hidden values blank. The platform's `FF_*` variables are added when the device downloads its snapshot.",
      },
    })
    .input(DeviceIdInput)
    .output(DeviceSettings)
    .query(async ({ ctx, input }) => {
      const device = await deviceOf(ctx.db, input.deviceId);
      return { env: visibleDeviceEnv(device.settings.env) };
    }),

  updateSettings: procedure
    .meta({
      permission: "device:edit-env",
      openapi: {
        method: "PUT",
        path: "/api/v1/devices/{deviceId}/settings",
        tags: [TAG],
        summary: "Change a device's environment variables (members)",
        description:
          "`env` replaces the device's variables. A hidden variable sent with an empty value keeps its value; `FF_*` variables are the platform's and are dropped. The device picks the change up at its next check-in (its settings hash changes) and restarts Node-RED with them.",
      },
    })
    .input(UpdateDeviceSettingsInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      if (input.env === undefined) return { status: "okay" as const };
      const sent = input.env;
      await ctx.db.transaction().execute(async (trx) => {
        const before = await findDevice(trx, input.deviceId);
        if (!before) throw notFound();
        const env = envToStore(sent, before.settings.env ?? []);
        await updateDevice(trx, before.id, { env });
        await refreshSettingsHashes(trx, [before.id]);
        // Never the values: names only.
        await recordDeviceEvent(trx, "device.settings.updated", actorOf(ctx), before, {
          env: {
            old: (before.settings.env ?? []).map((v) => v.name),
            new: env.map((v) => v.name),
          },
        });
      });
      return { status: "okay" as const };
    }),
};

// GET /settings: what a client needs to know about the platform (FlowFuse's keys where it has them);
// PUT /settings: administrators change the settings Flowplane has.
import { actsAsAdmin } from "@flowplane/auth";
import { Settings, Status, UpdateSettingsInput } from "@flowplane/contract";
import { platformSettings, writePlatformSettings } from "@flowplane/db";
import { z } from "zod";
import { actorOf, procedure, router } from "../core/trpc";
import { VERSION } from "../core/version";
import { recordSettingsUpdated } from "./events";

export const settingsRouter = router({
  get: procedure
    .meta({
      permission: "settings:read",
      allowExpiredPassword: true,
      openapi: {
        method: "GET",
        path: "/api/v1/settings",
        tags: ["Settings"],
        summary: "The platform's settings",
        description:
          "Unlike FlowFuse, not open to anonymous callers: every route under /api/ needs a token or a session.",
      },
    })
    .input(z.void())
    .output(Settings)
    .query(async ({ ctx }) => ({
      version: VERSION,
      base_url: ctx.baseUrl,
      "team:create": (await platformSettings(ctx.db))["team:create"] && !ctx.auth.scope.readOnly,
      ...(ctx.brokerEndpoint && {
        "team:broker:host": ctx.brokerEndpoint.host,
        "team:broker:url": ctx.brokerEndpoint.url,
      }),
      ...(actsAsAdmin(ctx.auth) &&
        ctx.instances && { "platform:instances:isolation": await ctx.instances.isolation() }),
    })),

  update: procedure
    .meta({
      permission: "settings:edit",
      openapi: {
        method: "PUT",
        path: "/api/v1/settings",
        tags: ["Settings"],
        summary: "Change the platform's settings (administrators)",
        description:
          "The FlowFuse settings Flowplane has: `team:create` (whether users who are not administrators may create teams; default true). Keys left out are unchanged; any other key is 400 `invalid_request` naming it (FlowFuse stores any key). Audit `platform.settings.updated` with what changed, when anything did.",
      },
    })
    .input(UpdateSettingsInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      await ctx.db.transaction().execute(async (trx) => {
        const before = await platformSettings(trx);
        const updates = Object.entries(input)
          .filter(([key, value]) => before[key as keyof typeof before] !== value)
          .map(([key, value]) => ({ key, old: before[key as keyof typeof before], new: value }));
        await writePlatformSettings(trx, input);
        if (updates.length > 0) {
          await recordSettingsUpdated(trx, actorOf(ctx), updates);
        }
      });
      return { status: "okay" as const };
    }),
});

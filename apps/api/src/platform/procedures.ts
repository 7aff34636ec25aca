// GET /settings: what a client needs to know about the platform (FlowFuse's keys where it has them).
import { actsAsAdmin } from "@flowplane/auth";
import { Settings } from "@flowplane/contract";
import { z } from "zod";
import { procedure, router } from "../core/trpc";
import { VERSION } from "../version";

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
      "team:create": !ctx.auth.scope.readOnly,
      ...(ctx.brokerEndpoint && {
        "team:broker:host": ctx.brokerEndpoint.host,
        "team:broker:url": ctx.brokerEndpoint.url,
      }),
      ...(actsAsAdmin(ctx.auth) &&
        ctx.instances && { "platform:instances:isolation": await ctx.instances.isolation() }),
    })),
});

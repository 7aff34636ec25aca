// Where a device's flows report to the rollout that watches them (the health tab that
// devices/health-tab.ts adds): each start of the flows, and every error no catch node of the
// author's handled. The credential is checked before the body is read; it reaches this route for
// its device and rollout and nothing else. A report for a device the rollout no longer watches
// (healthy, ended) is answered and ignored: the tab keeps running until the device's next deploy.
import { bearerToken, isRolloutHealthToken } from "@flowplane/auth";
import { isId, RolloutHealthReport } from "@flowplane/contract";
import {
  countRolloutStart,
  type Db,
  failWatchedRolloutDevice,
  watchedRolloutDevice,
} from "@flowplane/db";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { toErrorResponse, unauthorized, validationError } from "../core/errors";
import { type RouteDoc, routeUrl } from "../core/route-docs";

export const HEALTH_REPORT: RouteDoc = {
  id: "rollouts-healthReport",
  method: "POST",
  path: "/api/v1/rollouts/{rolloutId}/devices/{deviceId}/health",
  // A device's own call (its flows'), beside the agent's.
  tags: ["Device agent"],
  summary: "A device's flows report to the rollout that watches them (its health tab)",
  description:
    "Posted by the health tab a rollout adds to the flows it serves a device: `started` each time Node-RED starts the flows (a second one while the rollout watches the device is a restart, and fails it), `error` for an error no catch node of the flows handled (fails it). Answers whether the rollout still watches the device.",
  security: "rolloutHealthToken",
  params: z.object({ rolloutId: z.string(), deviceId: z.string() }),
  body: RolloutHealthReport,
  responses: {
    200: {
      description: "Taken (or ignored: the rollout no longer watches the device)",
      schema: z.object({ watched: z.boolean() }),
    },
    400: { description: "Not a report (`invalid_request`)" },
    401: { description: "Not this device's and rollout's credential (`unauthorized`)" },
  },
};

/** The description of the node that raised an error, as its report names it. */
function sourceOf(report: z.infer<typeof RolloutHealthReport>) {
  const source = report.source ?? {};
  const what = source.type ?? "a";
  const name = source.name ? ` "${source.name}"` : source.id ? ` ${source.id}` : "";
  return `${what} node${name}`;
}

export async function healthReportRoute(
  app: FastifyInstance,
  opts: { db: Db; tokenSecret: string; poke: () => void },
) {
  const { db } = opts;
  app.addHook("onRequest", async (request, reply) => {
    const { rolloutId, deviceId } = request.params as { rolloutId: string; deviceId: string };
    const token = bearerToken(request.headers.authorization);
    if (
      !token ||
      !isId(rolloutId) ||
      !isId(deviceId) ||
      !isRolloutHealthToken(opts.tokenSecret, rolloutId, deviceId, token)
    ) {
      const { status, body } = toErrorResponse(unauthorized(), request.id);
      return reply.code(status).send(body);
    }
  });

  app.post(routeUrl(HEALTH_REPORT), { config: { rateLimit: false } }, async (request) => {
    const { rolloutId, deviceId } = request.params as { rolloutId: string; deviceId: string };
    const parsed = RolloutHealthReport.safeParse(request.body);
    if (!parsed.success) {
      // Fails closed: a report the platform cannot read that is not a start is an error of the
      // flows all the same (and the reply says what was wrong with it).
      const event = (request.body as { event?: unknown } | null)?.event;
      if (event !== "started") {
        await fail(
          rolloutId,
          deviceId,
          "A flow raised an uncaught error (its report to the rollout was not readable)",
        );
      }
      throw validationError(parsed.error);
    }
    const report = parsed.data;
    const watched = await watchedRolloutDevice(db, deviceId, rolloutId);
    if (!watched) return { watched: false };
    if (report.event === "started") {
      if ((await countRolloutStart(db, rolloutId, deviceId)) > 1) {
        await fail(
          rolloutId,
          deviceId,
          "Node-RED restarted: its flows started again while the rollout watched it",
        );
      } else {
        // Its flows run: it may soak now.
        opts.poke();
      }
    } else {
      const message = report.message ?? "an error";
      await fail(
        rolloutId,
        deviceId,
        `A flow raised an uncaught error: ${message} (${sourceOf(report)})`,
      );
    }
    return { watched: true };
  });

  async function fail(rolloutId: string, deviceId: string, reason: string) {
    if (await failWatchedRolloutDevice(db, deviceId, reason, { rolloutId })) opts.poke();
  }
}

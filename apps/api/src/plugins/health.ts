// Liveness and readiness for load balancers: open, and carrying no data about the platform. Not
// ready is the error envelope naming what is not (503 `database_unavailable`, with Retry-After). The
// liveness answer names what answers (`{"status":"ok","platform":"flowplane"}`), so that a client
// (`flowplane login`, the getting-started guide's curl) can tell this platform from whatever else
// listens at a URL before it sends a credential there.
import { type Db, ping } from "@flowplane/db";
import type { FastifyInstance } from "fastify";
import { databaseUnavailable, sendError } from "../core/errors";

export async function healthPlugin(app: FastifyInstance, opts: { db: Db }) {
  // Never rate limited: a limit must not take a healthy server out of its load balancer.
  const config = { rateLimit: false as const };
  app.get("/healthz", { config }, async (_request, reply) =>
    reply.code(200).send({ status: "ok", platform: "flowplane" }),
  );
  // Ready when the database answers; a failure is logged once per outage, not at every probe.
  let down = false;
  app.get("/readyz", { config }, async (request, reply) => {
    try {
      await ping(opts.db);
      if (down) request.log.info("database ready again");
      down = false;
      return reply.code(200).send();
    } catch (error) {
      if (!down) request.log.warn({ err: error }, "database not ready");
      down = true;
      return sendError(request, reply, databaseUnavailable());
    }
  });
}

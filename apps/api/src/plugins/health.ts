// Liveness and readiness for load balancers: open, and carrying no data about the platform. The
// liveness answer names what answers (`{"status":"ok","platform":"flowplane"}`), so that a client
// (`flowplane login`, the getting-started guide's curl) can tell this platform from whatever else
// listens at a URL before it sends a credential there.
import { type Db, ping } from "@flowplane/db";
import type { FastifyInstance } from "fastify";

export async function healthPlugin(app: FastifyInstance, opts: { db: Db }) {
  // Never rate limited: a limit must not take a healthy server out of its load balancer.
  const config = { rateLimit: false as const };
  app.get("/healthz", { config }, async (_request, reply) =>
    reply.code(200).send({ status: "ok", platform: "flowplane" }),
  );
  app.get("/readyz", { config }, async (request, reply) => {
    try {
      await ping(opts.db);
      return reply.code(200).send();
    } catch (error) {
      request.log.warn({ err: error }, "database not ready");
      return reply.code(503).send();
    }
  });
}

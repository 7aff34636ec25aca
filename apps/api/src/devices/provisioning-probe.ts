// The device agent's check before it provisions itself: with a provisioning token it first GETs
// the platform's base URL (its `forgeURL`, i.e. `/`) with that token as the bearer, and goes on
// only on 200 or 204 (agent 4.2's AgentManager `_getDeviceInfo`). The front page would redirect it
// to the sign-in page; a live provisioning token there is answered 204 instead, with nothing in
// it. The token reaches nothing more by this: `/` with any other caller is the front page as ever.
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import type { Authenticator } from "../core/authenticator";

/** GET or HEAD of the base URL itself, with a provisioning token's shape (no I/O before it). */
const PROBE = /^\/(\?|$)/;

export const provisioningProbe = fp(
  async (app: FastifyInstance, opts: { authenticator: Authenticator }) => {
    app.addHook("onRequest", async (request, reply) => {
      if (request.method !== "GET" && request.method !== "HEAD") return;
      const header = request.headers.authorization;
      if (header === undefined || !header.startsWith("Bearer fpv_") || !PROBE.test(request.url)) {
        return;
      }
      if (await opts.authenticator.authenticateProvisioning(header)) return reply.code(204).send();
    });
  },
  { name: "device-provisioning-probe" },
);

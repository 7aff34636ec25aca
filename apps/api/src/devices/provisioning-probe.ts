// The device agent's check before it provisions itself: with a provisioning token it first GETs
// the platform's base URL (its `forgeURL`, i.e. `/`) with that token as the bearer, and goes on
// only on 200 or 204 (agent 4.2's AgentManager `_getDeviceInfo`). The front page would redirect it
// to the sign-in page; a live provisioning token there is answered 204 instead, with nothing in
// it. The token reaches nothing more by this: `/` with any other caller is the front page as ever.
import type { FastifyInstance, onRequestHookHandler } from "fastify";
import type { Authenticator } from "../core/authenticator";

/**
 * Adds the check to the front page's route (GET and HEAD of `/`), as a hook of that route alone,
 * when the route is added: `app` is the root, so that its pages' routes pass through here.
 */
export function probeOnFrontPage(app: FastifyInstance, authenticator: Authenticator) {
  const probe: onRequestHookHandler = async (request, reply) => {
    const header = request.headers.authorization;
    // A provisioning token's shape first (no I/O for anyone else).
    if (header === undefined || !header.startsWith("Bearer fpv_")) return;
    if (await authenticator.authenticateProvisioning(header)) return reply.code(204).send();
  };
  app.addHook("onRoute", (route) => {
    const methods = [route.method].flat();
    if (route.url !== "/" || !methods.some((method) => method === "GET" || method === "HEAD")) {
      return;
    }
    const hooks = [route.onRequest ?? []].flat();
    // A HEAD route made from the GET one comes with the GET's hooks, this one among them.
    if (!hooks.includes(probe)) route.onRequest = [probe, ...hooks];
  });
}

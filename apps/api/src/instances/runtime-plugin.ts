// The instance runtime's lifecycle (runtime.ts): once the server answers, instances
// whose desired state is running are started again; when it starts closing, the driver stops them
// (their files are kept) and starts none after.
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import type { InstanceRuntime } from "./runtime";

/** Where this server listens, as an instance on this machine reaches it (not BASE_URL). */
export function listeningUrl(app: FastifyInstance): string {
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("the server is not listening");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${["0.0.0.0", "[::]"].includes(host) ? "127.0.0.1" : host}:${address.port}`;
}

export const runtimePlugin = fp(
  async (app: FastifyInstance, opts: { runtime: InstanceRuntime }) => {
    // Resuming runs in the background once the server listens; a close waits for it, so that
    // nothing it does reaches the database after the server has said it is closed.
    let resuming: Promise<void> = Promise.resolve();
    app.addHook("onListen", async () => {
      resuming = opts.runtime.resume().catch((error: unknown) => {
        app.log.error({ err: error }, "resuming instances failed");
      });
    });
    // Before the server stops answering (preClose, not onClose): a Node-RED starting now reads
    // its flows from this server, so a start under way would otherwise wait out its timeout.
    // Requests still under way then get 503 for a start, and anything else as usual. The
    // runtime closes first, so a resume under way starts nothing more and ends.
    app.addHook("preClose", async () => {
      await opts.runtime.close();
      await resuming;
    });
  },
  { name: "runtime" },
);

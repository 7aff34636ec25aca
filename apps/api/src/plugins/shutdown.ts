// Shutting down: from the moment the server starts closing, answers close their connection, so
// keep-alive sockets do not hold the exit.
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";

export const shutdownPlugin = fp(
  async (app: FastifyInstance) => {
    let closing = false;
    app.addHook("preClose", async () => {
      closing = true;
    });
    app.addHook("onSend", (_request, reply, payload, done) => {
      if (closing) reply.header("connection", "close");
      done(null, payload);
    });
  },
  { name: "shutdown" },
);

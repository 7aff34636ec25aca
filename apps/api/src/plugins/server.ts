// The HTTP server Fastify runs on, with the areas' front doors before it: a request or a WebSocket
// upgrade a door takes (the editors' hosts, an instance's own connection) never reaches Fastify's
// router; every other one does.
import type { FastifyInstance, FastifyServerFactory } from "fastify";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Duplex } from "node:stream";
import type { FrontDoor } from "./area";

export function serverWithFrontDoors(doors: readonly FrontDoor[]): FastifyServerFactory {
  return (handler) => {
    // A door that throws (a request no one thought of) fails that request, never the process:
    // what reaches a door comes before Fastify and its error handling.
    const server = createServer((request, response) => {
      try {
        if (doors.some((door) => door.web(request, response))) return;
      } catch {
        if (!response.headersSent) response.writeHead(400, { "content-type": "text/plain" });
        response.end("Bad Request\n");
        return;
      }
      handler(request, response);
    });
    const emit = server.emit.bind(server) as (event: string, ...args: unknown[]) => boolean;
    server.emit = ((event: string, ...args: unknown[]) => {
      if (event === "upgrade") {
        const [request, socket, head] = args as [IncomingMessage, Duplex, Buffer];
        try {
          if (doors.some((door) => door.upgrade(request, socket, head))) return true;
        } catch {
          socket.destroy();
          return true;
        }
      }
      return emit(event, ...args);
    }) as Server["emit"];
    // Node's server hands an upgrade on only when something listens for it: this listener makes
    // it so for the doors' upgrades, and ends any other upgrade nothing else takes.
    server.on("upgrade", (_request: IncomingMessage, socket: Duplex) => {
      if (server.listenerCount("upgrade") === 1) socket.destroy();
    });
    return server;
  };
}

/** Where this server listens, as an instance on this machine reaches it (not BASE_URL). */
export function listeningUrl(app: FastifyInstance): string {
  const address = app.server.address();
  if (!address || typeof address === "string") throw new Error("the server is not listening");
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${["0.0.0.0", "[::]"].includes(host) ? "127.0.0.1" : host}:${address.port}`;
}

// Connections from hosted instances: each instance reaches the platform only through a Unix socket
// its driver hands it (no instance can reach the platform's TCP port from its own network
// namespace). The driver passes each accepted connection here; it is served by the platform's HTTP
// server like any other, but a request on it may reach only that instance's own storage routes and
// its team's library (their tokens decide the rest): nothing else of the platform answers there.
import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";

const instanceOfSocket = new WeakMap<object, string>();

/** Serves a connection an instance opened, on `server` (none, or closed: the connection ends). */
export function acceptInstanceConnection(
  server: Server | undefined,
  instanceId: string,
  socket: Socket,
): void {
  if (!server?.listening) {
    socket.destroy();
    return;
  }
  instanceOfSocket.set(socket, instanceId);
  server.emit("connection", socket);
}

/** Whether a request came on an instance's connection for a path that is not that instance's. */
export function outsideInstanceRoutes(request: IncomingMessage): boolean {
  const instanceId = instanceOfSocket.get(request.socket);
  if (instanceId === undefined) return false;
  const url = request.url ?? "";
  return !(url.startsWith(`/storage/${instanceId}/`) || url.startsWith("/storage/library/"));
}

/** Whether a request came on a connection an instance opened (whatever its path). */
export function onInstanceConnection(request: IncomingMessage): boolean {
  return instanceOfSocket.has(request.socket);
}

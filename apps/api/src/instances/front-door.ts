// What reaches the platform before Fastify's router does, for hosted instances (plugins/server.ts):
// a request on an instance's own connection reaches only its own storage routes and nothing else
// (neither the platform's other routes nor, through the proxy, another editor); a request or an
// upgrade for an editor's host goes to the editors' proxy.
import type { FastifyBaseLogger } from "fastify";
import type { AppOptions, FrontDoor } from "../plugins/area";
import { editorHosts } from "./editor-hosts";
import { editorProxy } from "./editor-proxy";
import { onInstanceConnection, outsideInstanceRoutes } from "./platform-socket";

export function instancesFrontDoor(options: AppOptions, log: () => FastifyBaseLogger): FrontDoor {
  const { baseUrl } = options;
  const hosts = editorHosts(baseUrl, options.editorDomain);
  if (hosts.instanceOf(new URL(baseUrl).host) !== undefined) {
    throw new Error(
      `BASE_URL's host (${new URL(baseUrl).host}) is under the editors' domain (${hosts.domain}): editors must not share the platform's host`,
    );
  }
  const proxy = editorProxy({ db: options.db, hosts, driver: options.instances?.driver, log });
  return {
    web(request, response) {
      if (outsideInstanceRoutes(request)) {
        response.writeHead(404, { "content-type": "text/plain" }).end("Not Found\n");
        return true;
      }
      if (!proxy.handles(request)) return false;
      proxy.web(request, response);
      return true;
    },
    upgrade(request, socket, head) {
      // No upgrade on an instance's connection (its storage routes have none).
      if (onInstanceConnection(request)) {
        socket.destroy();
        return true;
      }
      if (!proxy.handles(request)) return false;
      proxy.upgrade(request, socket, head);
      return true;
    },
    close: async () => proxy.close(),
  };
}

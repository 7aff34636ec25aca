// The platform's proxy to hosted instances' editors: a request whose Host is an instance's editor
// host (editor-hosts.ts) goes to that instance's Node-RED, through the endpoint its driver reports
// (a Unix socket for the local driver), HTTP and WebSocket alike; nothing else of the platform
// answers on those hosts, and no editor answers on the platform's. The proxy authenticates no one:
// the editor signs people in through the platform (editor-sign-in.ts), and whatever the flows
// serve on their own HTTP routes is theirs to guard.
import { bearerToken, parseToken } from "@flowplane/auth";
import type { Db } from "@flowplane/db";
import { findProjectIdByName } from "@flowplane/db";
import type { Driver } from "@flowplane/runtime";
import type { FastifyBaseLogger } from "fastify";
import httpProxy from "http-proxy";
import { Agent, type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { LRUCache } from "lru-cache";
import type { EditorHosts } from "./editor-hosts";

export interface EditorProxyOptions {
  db: Db;
  hosts: EditorHosts;
  /** None: the platform runs no instances, and every editor host answers 503. */
  driver: Driver | undefined;
  /** The server's logger (known once the server is made). */
  log: () => FastifyBaseLogger;
}

export interface EditorProxy {
  /** Whether the request is for an instance's editor (its Host), not for the platform. */
  handles(request: IncomingMessage): boolean;
  web(request: IncomingMessage, response: ServerResponse): void;
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Ends the connections kept to editors (the server is closing). */
  close(): void;
}

/** How long an instance's id is remembered by name (a rename or deletion shows after this). */
const NAME_TTL_MS = 5_000;

export function editorProxy(opts: EditorProxyOptions): EditorProxy {
  const proxy = httpProxy.createProxyServer({ xfwd: true, ws: true });
  // Connections to the editors' sockets are kept and used again (per socket path): without an
  // agent, http-proxy opens a new one for every request and asks Node-RED to close it.
  const agent = new Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 8 });
  const ids = new LRUCache<string, { id: string | null }>({ max: 10_000, ttl: NAME_TTL_MS });

  proxy.on("error", (error, _request, target) => {
    opts.log().debug({ err: error }, "editor proxy: the instance did not answer");
    if ("writeHead" in target) {
      if (!target.headersSent) refuse(target, 502, "The instance's editor did not answer.");
      else target.destroy();
    } else target.destroy();
  });

  /** The editor's endpoint for the request's host, or the refusal to send. */
  async function endpointOf(
    request: IncomingMessage,
  ): Promise<{ socketPath: string } | { status: number; message: string }> {
    const name = opts.hosts.instanceOf(request.headers.host)!;
    let known = ids.get(name);
    if (!known) {
      known = { id: (await findProjectIdByName(opts.db, name)) ?? null };
      ids.set(name, known);
    }
    if (known.id === null) return { status: 404, message: `No instance is named ${name}.` };
    if (!opts.driver) return { status: 503, message: "This platform runs no instances." };
    const status = await opts.driver.status(known.id);
    if (!status.endpoint) {
      return { status: 503, message: `The instance ${name} is not running (${status.state}).` };
    }
    return status.endpoint;
  }

  return {
    close: () => agent.destroy(),
    handles: (request) => opts.hosts.instanceOf(request.headers.host) !== undefined,
    web(request, response) {
      if (carriesPlatformCredential(request)) {
        return refuse(
          response,
          401,
          "This is a credential of the platform's, which an instance's editor never receives: " +
            "give it a token for this editor (POST /api/v1/projects/{instanceId}/editor/token).",
        );
      }
      endpointOf(request).then(
        (endpoint) => {
          if ("status" in endpoint) return refuse(response, endpoint.status, endpoint.message);
          proxy.web(request, response, {
            target: { socketPath: endpoint.socketPath } as never,
            agent,
          });
        },
        (error: unknown) => {
          opts.log().error({ err: error }, "editor proxy: no instance found for the request");
          refuse(response, 500, "Something went wrong.");
        },
      );
    },
    upgrade(request, socket, head) {
      socket.on("error", () => {});
      if (carriesPlatformCredential(request)) {
        socket.end(`HTTP/1.1 401 ${STATUS_CODES[401]}\r\nConnection: close\r\n\r\n`);
        return;
      }
      endpointOf(request).then(
        (endpoint) => {
          if ("status" in endpoint) {
            socket.end(
              `HTTP/1.1 ${endpoint.status} ${STATUS_CODES[endpoint.status]}\r\nConnection: close\r\n\r\n`,
            );
            return;
          }
          proxy.ws(request, socket, head, { target: { socketPath: endpoint.socketPath } as never });
        },
        () => socket.destroy(),
      );
    },
  };
}

/** Kinds of the platform's own credentials: none of them may reach a tenant's process. */
const PLATFORM_CREDENTIALS = new Set([
  "personalAccessToken",
  "session",
  "instance",
  "device",
  "provisioning",
  "broker",
  "editorCode",
]);

/**
 * Whether the request's bearer is a credential of the platform's other than an editor session: a
 * script that sends its own token to an editor is refused here, before the token reaches the
 * instance's process (where a flow could read it).
 */
function carriesPlatformCredential(request: IncomingMessage): boolean {
  const token = bearerToken(request.headers.authorization);
  const kind = token ? parseToken(token) : undefined;
  return kind !== undefined && PLATFORM_CREDENTIALS.has(kind);
}

/** The proxy's own answer (the instance's pages are its own): plain text, never cached. */
function refuse(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    ...(status === 503 && { "retry-after": "5" }),
  });
  response.end(`${message}\n`);
}

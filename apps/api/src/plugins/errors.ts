// Errors, all in the `{ code, error, requestId }` envelope (tRPC's on /trpc): whatever a route or
// hook throws (Fastify's error handler); a path no route has (404), or a known path asked with a
// method it does not answer (405, with Allow); and the refusals made before any route or hook
// runs — the router's (bad percent-encoding, a path parameter too long to be an id) and Node's
// HTTP parser's (URI or headers too long, an unknown method, garbage), written on the socket.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { randomUUID } from "node:crypto";
import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import {
  ApiError,
  invalidRequest,
  methodNotAllowed,
  notFound,
  sendError,
  toErrorResponse,
} from "../core/errors";
import { queryRefusal } from "./request-parsing";

/** The methods each served path template answers, for 405 and its Allow header. */
class RouteMethods {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];

  add(url: string, methods: string | string[]) {
    const source = url
      .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
      .replace(/:\w+/g, "[^/]+")
      .replace(/\*/g, ".*");
    const pattern = new RegExp(`^${source}/?$`);
    let route = this.routes.find((r) => r.pattern.source === pattern.source);
    if (!route) this.routes.push((route = { pattern, methods: new Set() }));
    for (const method of [methods].flat()) route.methods.add(method);
  }

  /** The methods some route answers at this path; empty when no route has it. */
  allowed(url: string): string[] {
    const path = url.split("?")[0]!;
    return [
      ...new Set(this.routes.filter((r) => r.pattern.test(path)).flatMap((r) => [...r.methods])),
    ].sort();
  }
}

/** The prefixes whose paths are the API's, never a person's page: their 404 is always JSON. */
const API_PATHS = /^\/(api|account|trpc|assets)(\/|$|\?)/;

/**
 * Whether a 404 goes to a person rather than a program: a browser navigating (it asks for HTML)
 * to a path outside the API. Scripts, clients and `curl` ask for JSON or anything, and get JSON.
 */
function wantsPage(request: FastifyRequest): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  if (API_PATHS.test(request.url)) return false;
  return /\btext\/html\b/.test(request.headers.accept ?? "");
}

/** Registered before any route, so that it sees every route added. */
export const errorsPlugin = fp(
  async (app: FastifyInstance) => {
    const routeMethods = new RouteMethods();
    app.addHook("onRoute", (route) => routeMethods.add(route.url, route.method));
    app.setErrorHandler(async (error, request, reply) => sendError(request, reply, error));
    const answer = async (request: FastifyRequest, reply: FastifyReply) => {
      const allowed = routeMethods.allowed(request.url);
      const refusal =
        queryRefusal(request) ?? (allowed.length > 0 ? methodNotAllowed(allowed) : notFound());
      const page = pageNotFound.page;
      if (page && refusal.status === 404 && wantsPage(request)) return page(request, reply);
      return sendError(request, reply, refusal);
    };
    const pageNotFound: PageNotFound = {};
    app.setNotFoundHandler(answer);
    app.decorate("notFound", answer);
    app.decorate("pageNotFound", pageNotFound);
  },
  { name: "errors" },
);

/** Where the pages put the page a person's browser gets for a path that has none. */
export interface PageNotFound {
  page?: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
}

declare module "fastify" {
  interface FastifyInstance {
    /** The pages' answer to a browser's 404 (set by the pages plugin; JSON until then). */
    pageNotFound: PageNotFound;
    /**
     * The answer to a path no route has (404) or a method its path does not answer (405, with
     * Allow), after the query string's check: the root's, and that of each context with a prefix
     * of its own (the people's /api, whose hooks authenticate the caller first).
     */
    notFound(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  }
}

/**
 * The router's refusals, made before any route or hook runs (Fastify's `frameworkErrors`), so
 * the security headers no hook set are applied here.
 */
export function routerRefusal(
  app: FastifyInstance,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  app.frameworkReplyHeaders(reply);
  return sendError(request, reply, error);
}

/**
 * Requests Node's HTTP parser refuses never reach Fastify (no request, no hooks), so the reply is
 * written on the socket: still our envelope, with the headers every reply carries.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
  if (error.code === "ECONNRESET" || socket.destroyed || !socket.writable) return;
  let refusal: ApiError;
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    refusal = new ApiError(408, "request_timeout", "The request took too long to arrive");
  } else if (error.code === "HPE_HEADER_OVERFLOW") {
    // Blame the URI when the request line alone takes most of the limit.
    const { rawPacket } = error as { rawPacket?: unknown };
    const lineEnd = Buffer.isBuffer(rawPacket) ? rawPacket.indexOf("\r\n") : 0;
    const uriTooLong = lineEnd === -1 || lineEnd > maxHeaderSize / 2;
    refusal = uriTooLong
      ? new ApiError(414, "uri_too_long", "The URI is too long")
      : new ApiError(431, "headers_too_large", "The request headers are too large");
  } else if (error.code === "HPE_INVALID_METHOD") {
    refusal = new ApiError(501, "not_implemented", "The HTTP method is not supported");
  } else {
    refusal = invalidRequest("The request is not valid HTTP");
  }
  const requestId = randomUUID();
  const { status, body } = toErrorResponse(refusal, requestId);
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      "content-type: application/json; charset=utf-8\r\n" +
      `content-length: ${Buffer.byteLength(text)}\r\n` +
      "x-content-type-options: nosniff\r\n" +
      "cache-control: no-store\r\n" +
      `x-request-id: ${requestId}\r\n` +
      "connection: close\r\n\r\n" +
      text,
  );
}

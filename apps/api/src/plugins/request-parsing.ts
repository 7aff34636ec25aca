// What a request may carry: only JSON bodies (without a parser for text/plain, Fastify answers 415
// for it), and query strings whose percent-encoding decodes (else 400, naming the parameters).
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { parse as parseQueryString } from "node:querystring";
import { invalidRequest, sendError } from "../core/errors";

/** What the query parser answers for a query string with malformed percent-encoding. */
class MalformedQuery {
  [key: string]: unknown;
  constructor(readonly parameters: string[]) {}
}

const decodes = (text: string) => {
  try {
    decodeURIComponent(text.replace(/\+/g, " "));
    return true;
  } catch {
    return false;
  }
};

/**
 * Node's parser (repeated keys become arrays), after checking that every parameter decodes: a
 * malformed or non-UTF-8 percent-encoding is refused (400, naming the parameter) rather than
 * silently mangled. Given to Fastify's router when the server is made.
 */
export function parseQuery(query: string): Record<string, unknown> {
  const malformed = query
    .split("&")
    .filter((pair) => !decodes(pair))
    .map((pair) => pair.split("=")[0]!)
    .map((key) => (decodes(key) ? decodeURIComponent(key.replace(/\+/g, " ")) : key));
  return malformed.length > 0 ? new MalformedQuery(malformed) : parseQueryString(query);
}

export interface RequestParsingOptions {
  /** Paths whose routes check what they are sent themselves (the broker's, the instances'). */
  checkedByTheirRoutes: RegExp[];
}

export const requestParsingPlugin = fp(
  async (app: FastifyInstance, opts: RequestParsingOptions) => {
    app.removeContentTypeParser("text/plain");
    app.addHook("onRequest", (request, reply, done) => {
      if (
        !(request.query instanceof MalformedQuery) ||
        opts.checkedByTheirRoutes.some((paths) => paths.test(request.url))
      ) {
        done();
        return;
      }
      const { parameters } = request.query;
      void sendError(
        request,
        reply,
        invalidRequest(
          `Invalid request: ${parameters.join(", ")}: malformed percent-encoding`,
          parameters.map((path) => ({ path, message: "Malformed percent-encoding" })),
        ),
      );
    });
  },
  { name: "request-parsing" },
);

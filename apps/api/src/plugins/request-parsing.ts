// What a request may carry: only JSON bodies (without a parser for text/plain, Fastify answers 415
// for it), and query strings whose percent-encoding decodes (else 400, naming the parameters).
import type { FastifyInstance, FastifyRequest } from "fastify";
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

/** The refusal of a query string whose percent-encoding does not decode (none: it decodes). */
export function queryRefusal(request: FastifyRequest) {
  if (!(request.query instanceof MalformedQuery)) return undefined;
  const { parameters } = request.query;
  return invalidRequest(
    `Invalid request: ${parameters.join(", ")}: malformed percent-encoding`,
    parameters.map((path) => ({ path, message: "Malformed percent-encoding" })),
  );
}

/**
 * The check, as a hook of the contexts whose routes take what people send (the people's API,
 * the pages, health); the machines' routes check what they are sent themselves, after their
 * caller is known.
 */
export function checkQueries(app: FastifyInstance) {
  app.addHook("onRequest", (request, reply, done) => {
    const refusal = queryRefusal(request);
    if (refusal === undefined) return done();
    void sendError(request, reply, refusal);
  });
}

/** Only JSON bodies: without a parser for text/plain, Fastify answers 415 for it. */
export const jsonBodiesOnly = fp(
  async (app: FastifyInstance) => {
    app.removeContentTypeParser("text/plain");
  },
  { name: "request-parsing" },
);

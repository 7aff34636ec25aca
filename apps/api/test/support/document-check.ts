// Holds every reply a test server sends to the OpenAPI document it serves: a hook on the server
// itself, so the replies seen by the CLI, a generated client, Chromium or a bare `fetch` are held
// to it as much as those of the harness's own client, and a new operation is covered the moment
// it is declared. Exported as `@flowplane/api/testing` for the CLI's tests.
import { Ajv, type ValidateFunction } from "ajv";
import type { FastifyInstance } from "fastify";

type Operation = { responses: Record<string, { content?: Record<string, unknown> }> };
export type OpenApiDocument = { paths: Record<string, Record<string, Operation>> };

interface SentReply {
  method: string;
  url: string;
  status: number;
  contentType: string | undefined;
  text: string;
  requestId: string;
}

export interface ReplyWatch {
  /** The document to hold replies to (the server's own, read once it listens). */
  useDocument(document: OpenApiDocument): void;
  /** What was wrong with the reply to this request (by its `x-request-id`), and forgets it. */
  problemsOf(requestId: string): string[];
  /** Every problem not yet asked for by `problemsOf`, and forgets them. */
  takeProblems(): string[];
}

/** A reply's problems against the document: an undeclared status, a body not of its schema. */
export function documentChecker(document: OpenApiDocument) {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(document, "openapi");
  const operations = Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      template,
      pattern: new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}/?$`),
      operation,
    })),
  );
  const pointer = (...parts: string[]) =>
    parts.map((p) => encodeURIComponent(p.replace(/~/g, "~0").replace(/\//g, "~1"))).join("/");
  const validators = new Map<string, ValidateFunction>();

  return (reply: Omit<SentReply, "requestId">): string[] => {
    const bare = reply.url.split("?")[0]!;
    const what = `${reply.method} ${reply.url} → ${reply.status}`;
    const json = reply.contentType === "application/json";
    let body: unknown;
    if (json && reply.text) {
      try {
        body = JSON.parse(reply.text);
      } catch {
        return [`${what}: the body is not JSON`];
      }
    }
    // Every error in JSON has the envelope, on any path but /trpc (tRPC's own, trpc.test.ts).
    if (reply.status >= 400 && json && !bare.startsWith("/trpc")) {
      const envelope = body as Record<string, unknown> | undefined;
      if (
        typeof envelope?.code !== "string" ||
        typeof envelope.error !== "string" ||
        typeof envelope.requestId !== "string"
      ) {
        return [`${what}: not the error envelope: ${reply.text.slice(0, 200)}`];
      }
    }
    if (!bare.startsWith("/api/v1/")) return [];
    // A method the path does not answer (405) or a path no operation has (404): not declared.
    const found = operations.find((o) => o.method === reply.method && o.pattern.test(bare));
    if (!found) return [];
    const declared = found.operation.responses[String(reply.status)];
    if (!declared) return [`${what}: status ${reply.status} is not in the document`];
    if (!declared.content) {
      return reply.text === "" ? [] : [`${what}: the document says no body`];
    }
    // A reply that is not JSON (a CSV export): its media type must be the one documented.
    const mediaTypes = Object.keys(declared.content);
    if (!mediaTypes.includes("application/json")) {
      return mediaTypes.includes(reply.contentType ?? "")
        ? []
        : [`${what}: ${reply.contentType} is not in the document (${mediaTypes.join(", ")})`];
    }
    if (!json) return [`${what}: ${reply.contentType} where the document says JSON`];
    const ref = `openapi#/${pointer("paths", found.template, reply.method.toLowerCase(), "responses", String(reply.status), "content", "application/json", "schema")}`;
    let validate = validators.get(ref);
    if (!validate) {
      validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
      validators.set(ref, validate);
    }
    return validate(body) ? [] : [`${what}: ${JSON.stringify(validate.errors)}`];
  };
}

/**
 * Watches every reply `app` sends (add before it listens). Replies sent before the document is
 * given are checked when it is.
 */
export function watchReplies(app: FastifyInstance): ReplyWatch {
  let check: ReturnType<typeof documentChecker> | undefined;
  const waiting: SentReply[] = [];
  const problems = new Map<string, string[]>();
  const record = (reply: SentReply) => {
    const found = check!(reply);
    if (found.length > 0) problems.set(reply.requestId, found);
  };

  app.addHook("onSend", async (request, reply, payload) => {
    const sent: SentReply = {
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      contentType: String(reply.getHeader("content-type") ?? "").split(";")[0] || undefined,
      // Every reply under /api is a string or nothing by now; a stream (none yet) is not read.
      text: typeof payload === "string" ? payload : Buffer.isBuffer(payload) ? String(payload) : "",
      requestId: String(request.id),
    };
    if (check) record(sent);
    else waiting.push(sent);
    return payload;
  });

  return {
    useDocument(document) {
      check = documentChecker(document);
      for (const sent of waiting.splice(0)) record(sent);
    },
    problemsOf(requestId) {
      const found = problems.get(requestId) ?? [];
      problems.delete(requestId);
      return found;
    },
    takeProblems() {
      const all = [...problems.values()].flat();
      problems.clear();
      return all;
    },
  };
}

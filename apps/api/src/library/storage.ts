// The team library as Node-RED reaches it: `/storage/library/{teamId}/<path>` (FlowFuse's routes,
// outside /api/v1 and the OpenAPI document). Callers: an instance's Node-RED with its own token
// (`fpi_…`), for its own team only, reading and saving (its library panel; Node-RED never
// deletes); and people — a signed-in browser or a personal access token — by the library
// permissions of their role, deleting too. Anyone else, and any other team, gets 404.
import { authorize, bearerToken, type Permission, parseToken, tokenDigest } from "@flowplane/auth";
import {
  Flows,
  isId,
  LibraryMeta,
  LibraryType,
  libraryPathProblem,
  MAX_LIBRARY_BODY,
  Text,
} from "@flowplane/contract";
import { type Db, findLibraryEntry, findProjectByToken, findTeamForUser } from "@flowplane/db";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Authenticator } from "../core/authenticator";
import { sessionCookieOf } from "../core/credentials/sessions";
import { crossOriginRefusal } from "../core/cross-origin";
import { ApiError, forbidden, invalidRequest, notFound, validationError } from "../core/errors";
import { deleteEntries, type LibraryActor, readFolder, saveEntry } from "./entries";

export interface LibraryStorageOptions {
  db: Db;
  tokenSecret: string;
  authenticator: Authenticator;
  baseUrl: string;
}

const PERMISSION: Record<string, Permission> = {
  GET: "library:entry:list",
  POST: "library:entry:create",
  DELETE: "library:entry:delete",
};

/** A flow sent as one object: checked as a flow of that one node would be. */
const FlowObject = z.record(Text.max(1024), z.unknown()).superRefine((value, ctx) => {
  const checked = Flows.safeParse([value]);
  for (const issue of checked.error?.issues ?? []) {
    ctx.addIssue({ code: "custom", message: issue.message, path: issue.path.slice(1) });
  }
});

const SaveBody = z.object({
  type: LibraryType,
  meta: LibraryMeta.optional(),
  // Node-RED sends the body as text; FlowFuse also takes a flow as JSON: checked as the contract
  // checks a flow (storable text, nesting bounded), so that no JSON it cannot hold (or nested so
  // deep that turning it into text overflows the stack) reaches the database as a 500.
  body: z.union([Text.max(MAX_LIBRARY_BODY), Flows, FlowObject]),
  // FlowFuse's plugin repeats the path here; the URL's is the one used.
  name: Text.max(1024).optional(),
});

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationError(parsed.error);
  return parsed.data;
}

/** The path after the team's id, without a trailing `/` (a folder asked for as one). */
function pathOf(request: FastifyRequest): string {
  const raw = ((request.params as { "*"?: string })["*"] ?? "").replace(/\/+$/, "");
  const problem = raw === "" ? undefined : libraryPathProblem(raw);
  if (problem)
    throw invalidRequest(`Invalid request: path: ${problem}`, [{ path: "path", message: problem }]);
  return raw;
}

function typeOf(request: FastifyRequest, required: boolean): string | undefined {
  const { type } = request.query as { type?: unknown };
  if (type === undefined && !required) return undefined;
  if (type === undefined) {
    throw invalidRequest("Missing type parameter", [{ path: "type", message: "Required" }]);
  }
  return parse(LibraryType, type);
}

export async function libraryStorageRoutes(app: FastifyInstance, opts: LibraryStorageOptions) {
  const ownOrigin = new URL(opts.baseUrl).origin;

  /** Who may do what the request asks of the team's library; throws 404 or 403 otherwise. */
  async function caller(request: FastifyRequest): Promise<LibraryActor> {
    const { teamId } = request.params as { teamId: string };
    if (!isId(teamId)) throw notFound();
    const header = request.headers.authorization;
    const token = bearerToken(header);
    if (token && parseToken(token) === "instance") {
      const project = await findProjectByToken(opts.db, tokenDigest(opts.tokenSecret, token));
      if (!project || project.team_id !== teamId) throw notFound();
      // Node-RED's library reads and saves; deleting is for people.
      if (request.method === "DELETE") throw forbidden();
      return { instance: { id: project.id, name: project.name } };
    }
    // Cookies are parsed where a session is read (the authentication plugin parses none here).
    const cookie = header === undefined ? sessionCookieOf(app, request) : undefined;
    const authenticated = await opts.authenticator.authenticate(header, {
      teamId,
      sessionCookie: cookie,
    });
    if (!authenticated) throw notFound();
    const { identity, team } = authenticated;
    // A signed-in browser's write is judged as the API's (plugins/csrf.ts): not from another site.
    const refusal =
      identity.kind === "session" ? crossOriginRefusal(request, ownOrigin) : undefined;
    if (refusal !== undefined) {
      request.log.warn({ reason: refusal }, "cross-site request refused");
      throw forbidden(
        "Cross-site request refused: it was sent from another site. Send it from a page of this platform, or with a bearer token",
        "csrf_failed",
      );
    }
    if (identity.passwordExpired) {
      throw forbidden("Your password has expired: choose a new one first", "password_expired");
    }
    // A token's lookup brought the team; a session's did not.
    const found = team ? team.found : await findTeamForUser(opts.db, teamId, identity.userId);
    const decision = authorize(PERMISSION[request.method]!, identity, {
      id: teamId,
      exists: found !== undefined,
      membershipRole: found?.role,
    });
    if (!decision.allowed) throw decision.status === 404 ? notFound() : forbidden();
    return { userId: identity.userId, tokenId: identity.tokenId };
  }

  /** Each request's caller, decided by the hook below. */
  const actors = new WeakMap<FastifyRequest, LibraryActor>();
  // Who calls, and whether they may, is decided before the body is read (this context's own
  // onRequest hook): anyone else is answered at once, never made to wait while the platform
  // buffers and parses a body of up to twice MAX_LIBRARY_BODY (issue 32).
  app.addHook("onRequest", async (request) => {
    actors.set(request, await caller(request));
  });
  const actorOf = (request: FastifyRequest) => actors.get(request)!;

  // Node-RED's own calls are not counted against people's limits. Flows can be large.
  const config = { rateLimit: false as const };
  const bodyLimit = MAX_LIBRARY_BODY * 2;

  const read = async (request: FastifyRequest, reply: FastifyReply) => {
    const { teamId } = request.params as { teamId: string };
    const path = pathOf(request);
    const type = typeOf(request, true)!;
    const entry = path === "" ? undefined : await findLibraryEntry(opts.db, teamId, type, path);
    if (entry) {
      reply.header("x-meta-type", entry.type);
      // A flow is its JSON; anything else its text, as Node-RED's editor serves them.
      if (entry.type === "flows") return reply.type("application/json").send(entry.body);
      return reply.type("text/plain; charset=utf-8").send(entry.body);
    }
    reply.header("x-meta-type", "folder");
    return reply.send(await readFolder(opts.db, teamId, type, path));
  };
  app.get("/storage/library/:teamId", { config }, read);
  app.get("/storage/library/:teamId/*", { config }, read);

  app.post("/storage/library/:teamId/*", { config, bodyLimit }, async (request, reply) => {
    const actor = actorOf(request);
    const { teamId } = request.params as { teamId: string };
    const path = pathOf(request);
    if (path === "")
      throw invalidRequest("Invalid request: path: Required", [
        { path: "path", message: "Required" },
      ]);
    const input = parse(SaveBody, request.body ?? {});
    const body = typeof input.body === "string" ? input.body : JSON.stringify(input.body);
    if (body.length > MAX_LIBRARY_BODY) {
      throw new ApiError(413, "payload_too_large", "The entry is too large");
    }
    await saveEntry(
      opts.db,
      teamId,
      { type: input.type, path, meta: input.meta ?? {}, body },
      actor,
    );
    return reply.code(201).send();
  });

  app.delete("/storage/library/:teamId/*", { config }, async (request, reply) => {
    const actor = actorOf(request);
    const { teamId } = request.params as { teamId: string };
    const path = pathOf(request);
    if (path === "")
      throw invalidRequest("Invalid request: path: Required", [
        { path: "path", message: "Required" },
      ]);
    // Without `type`, the entry or folder at `path` goes whatever its type (FlowFuse's).
    const type = typeOf(request, false);
    const deleteCount = await deleteEntries(opts.db, teamId, { type, path }, actor);
    return reply.send({ status: "okay", deleteCount });
  });
}

// Who gets into a hosted instance's editor, decided by the platform. Opening an editor signs the
// person in on the platform's own page (GET /account/authorize, an OAuth 2.0 authorization-code
// grant as FlowFuse's editors use): the page hands the editor a one-time code, which the
// instance's Node-RED exchanges here, with its own token, for an editor session (`fpe_…`) bound
// to that instance. So the tenant's process never sees a password, a platform session or a
// personal access token: only editor sessions, which reach its own editor and nothing else, and
// which are decided by the person's role of the moment at every request (`/auth/token`).
import { generateToken, parseToken, tokenDigest } from "@flowplane/auth";
import { Role } from "@flowplane/contract";
import {
  type Db,
  deleteEditorSession,
  findProject,
  findTeamForUser,
  insertEditorCode,
  insertSession,
  takeEditorCode,
  unlessMalformedId,
} from "@flowplane/db";
import type { InstanceOfToken } from "@flowplane/db";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Authenticator } from "../core/authenticator";
import { ApiError, unauthorized, validationError } from "../core/errors";
import { withNext } from "../pages/next";
import type { EditorHosts } from "./editor-hosts";

/** How long an authorization code may wait for its exchange. */
const CODE_LIFETIME_MS = 60_000;

export interface EditorSignInOptions {
  db: Db;
  tokenSecret: string;
  authenticator: Authenticator;
  /** How long an editor session lasts at most (its idle timeout is the platform's sessions'). */
  editorSessionMaxAgeMs: number;
  hosts: EditorHosts;
}

/** Who gets into the editor, with what: members and owners deploy, viewers read. */
export function editorRights(role: number | undefined): "*" | "read" | undefined {
  if (role === undefined || role < Role.viewer) return undefined;
  return role >= Role.member ? "*" : "read";
}

/** A new editor session for the user in the instance: its value, returned once. */
export async function startEditorSession(
  options: Pick<EditorSignInOptions, "db" | "tokenSecret">,
  session: { userId: string; projectId: string; expiresAt: Date; scripted?: boolean },
): Promise<string> {
  const token = generateToken("editorSession");
  await insertSession(options.db, {
    userId: session.userId,
    digest: tokenDigest(options.tokenSecret, token),
    expiresAt: session.expiresAt,
    projectId: session.projectId,
    scripted: session.scripted,
  });
  return token;
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error);
  return parsed.data;
}

const refused = () => new ApiError(403, "forbidden", "Not a member of the instance's team");
const expired = () =>
  new ApiError(403, "password_expired", "Your password has expired: choose a new one first");

/**
 * The routes an instance's Node-RED calls for its editor (platform.cjs), under its storage API and
 * its token: `guard` answers the instance the token belongs to, or has sent the 401.
 */
export function editorSessionRoutes(
  app: FastifyInstance,
  opts: EditorSignInOptions,
  guard: (request: FastifyRequest, reply: FastifyReply) => Promise<InstanceOfToken | undefined>,
): void {
  const config = { rateLimit: false as const };

  // The code the sign-in page handed the browser, exchanged once for an editor session.
  app.post("/storage/:instanceId/auth/code", { config }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    const { code } = parse(z.strictObject({ code: z.string().max(256) }), request.body);
    const taken =
      parseToken(code) === "editorCode"
        ? await takeEditorCode(opts.db, tokenDigest(opts.tokenSecret, code), project.id)
        : undefined;
    if (!taken) throw unauthorized();
    const found = await findTeamForUser(opts.db, project.team_id, taken.userId);
    const permissions = editorRights(found?.role);
    if (!permissions) throw refused();
    const token = await startEditorSession(opts, {
      userId: taken.userId,
      projectId: project.id,
      expiresAt: new Date(Date.now() + opts.editorSessionMaxAgeMs),
    });
    const session = await opts.authenticator.authenticateEditor(token, project.id, false);
    if (!session) throw unauthorized();
    return reply.send({ username: session.username, permissions, token });
  });

  // Every request of the editor: its bearer must be an editor session of this instance, decided
  // by the rules of the moment (the role in the team, a suspension, an expired password, a
  // password change or a removal, which end the session). No other credential is accepted: a
  // person's own token never passes through the tenant's process.
  app.post("/storage/:instanceId/auth/token", { config }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    // `check`: platform.cjs asking whether an open editor's session still holds (no activity).
    const { token, check } = parse(
      z.strictObject({ token: z.string().max(1024), check: z.boolean().optional() }),
      request.body,
    );
    const session = await opts.authenticator.authenticateEditor(token, project.id, !check);
    if (!session) throw unauthorized();
    // A sign-in's session waits for a new password; a script's, made with the person's own
    // token, holds as that token does.
    if (session.passwordExpired && !session.scripted) throw expired();
    const permissions = editorRights(session.role);
    if (!permissions) throw refused();
    return reply.send({ username: session.username, permissions, session: true });
  });

  // Signing out in the editor (Node-RED's /auth/revoke, passed on by platform.cjs): the editor
  // session ends here too, so the token is worthless to whoever still holds it.
  app.post("/storage/:instanceId/auth/revoke", { config }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    const { token } = parse(z.strictObject({ token: z.string().max(1024) }), request.body);
    if (parseToken(token) === "editorSession") {
      await deleteEditorSession(opts.db, tokenDigest(opts.tokenSecret, token), project.id);
    }
    return reply.code(204).send();
  });
}

const AuthorizeQuery = z.object({
  client_id: z.string().max(64),
  state: z
    .string()
    .min(8)
    .max(512)
    .regex(/^[A-Za-z0-9._~-]+$/),
  response_type: z.literal("code").optional(),
  redirect_uri: z.string().max(2048).optional(),
});

/**
 * GET /account/authorize: the platform's side of opening an editor. A browser without a session
 * goes to the sign-in page first and comes back; a member of the instance's team (viewer and up)
 * goes on to the instance's own editor with a one-time code. The code goes only to the editor's
 * host the platform derives from the instance's name: a `redirect_uri` anywhere else is refused
 * (no open redirect).
 */
export async function editorAuthorizeRoute(app: FastifyInstance, opts: EditorSignInOptions) {
  app.get("/authorize", async (request, reply) => {
    const query = parse(AuthorizeQuery, request.query);
    const project = await unlessMalformedId(findProject(opts.db, query.client_id));
    if (!project) throw new ApiError(404, "not_found", "Not Found");
    const callback = `${opts.hosts.editorUrl(project.name)}/auth/strategy/callback`;
    if (query.redirect_uri !== undefined && query.redirect_uri !== callback) {
      throw new ApiError(400, "invalid_request", "redirect_uri is not this instance's editor", [
        { path: "redirect_uri", message: "Not this instance's editor" },
      ]);
    }
    const auth = request.auth;
    if (auth?.kind !== "session") {
      return reply.redirect(withNext("/sign-in", request.url));
    }
    if (auth.passwordExpired) throw expired();
    const found = await findTeamForUser(opts.db, project.team_id, auth.userId);
    // Not a member: as for every team resource, the instance is not there for them.
    if (!editorRights(found?.role)) throw new ApiError(404, "not_found", "Not Found");
    const code = generateToken("editorCode");
    await insertEditorCode(opts.db, {
      digest: tokenDigest(opts.tokenSecret, code),
      userId: auth.userId,
      projectId: project.id,
      expiresAt: new Date(Date.now() + CODE_LIFETIME_MS),
    });
    const target = new URL(callback);
    target.searchParams.set("code", code);
    target.searchParams.set("state", query.state);
    return reply.redirect(target.toString());
  });
}

// What a hosted instance's Node-RED calls (packages/runtime/src/local/node-red/platform.cjs), under
// /storage/<instanceId>/ as FlowFuse's storage API: its flows, credentials, settings and library,
// kept in the platform's database; and its editor's sign-in and every editor request, decided here
// (the editor's sessions are the platform's, bound to the instance: see the sign-in below). Every
// call needs the instance's own token (`fpi_…`, a new one for each start of its Node-RED), which
// reaches this instance's routes and nothing else. Not in the OpenAPI document: not for people.
import {
  bearerToken,
  generateToken,
  parseToken,
  tokenDigest,
  tokenReachesTeam,
} from "@flowplane/auth";
import { ModuleName, ModuleVersion, Role } from "@flowplane/contract";
import {
  type Db,
  deleteEditorSession,
  findProjectByToken,
  findTeamForUser,
  findUserByLogin,
  insertSession,
  readLibraryEntries,
  readProjectStorage,
  setProjectPaletteModules,
  type StorageKind,
  writeLibraryEntry,
  writeProjectStorage,
} from "@flowplane/db";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Authenticator } from "../core/authenticator";
import { ApiError, toErrorResponse, unauthorized, validationError } from "../core/errors";
import { checkCredentials } from "../accounts/sessions";
import type { SignInLimits } from "../core/limits";

export interface InstanceStorageOptions {
  db: Db;
  tokenSecret: string;
  authenticator: Authenticator;
  signInLimits: SignInLimits;
  /** How long an editor session lasts at most (its idle timeout is the platform's sessions'). */
  editorSessionMaxAgeMs: number;
}

/** The instance whose token a request carries. */
type CallingInstance = NonNullable<Awaited<ReturnType<typeof findProjectByToken>>>;

/** The paths this plugin guards itself. */
export const INSTANCE_STORAGE = /^\/storage\//;

const KINDS: Record<string, { kind: StorageKind; schema: z.ZodType }> = {
  flows: { kind: "flows", schema: z.array(z.unknown()) },
  credentials: { kind: "credentials", schema: z.record(z.string(), z.unknown()) },
  settings: { kind: "settings", schema: z.record(z.string(), z.unknown()) },
};

const LibraryType = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);
const LibraryPath = z
  .string()
  .max(1024)
  .refine((path) => !path.split("/").includes(".."));
const LibraryEntry = z.strictObject({
  path: LibraryPath.refine((path) => path !== "" && !path.endsWith("/"), "A file's path"),
  meta: z.record(z.string(), z.unknown()),
  body: z.string().max(10 * 1024 * 1024),
});

/**
 * The modules installed into the user directory by name (`{ name: version }`), from Node-RED's
 * node list (its `nodes` runtime setting: `user` marks a module its package.json names). None
 * when the list is not there (settings saved before the node registry has loaded).
 */
function paletteModules(nodes: unknown): Record<string, string> | undefined {
  if (typeof nodes !== "object" || nodes === null) return undefined;
  const modules: Record<string, string> = {};
  for (const [name, entry] of Object.entries(nodes as Record<string, unknown>)) {
    const module = entry as { user?: unknown; version?: unknown } | null;
    if (
      module?.user === true &&
      typeof module.version === "string" &&
      ModuleName.safeParse(name).success &&
      // A version, never a URL or a path: the list is installed again elsewhere (a snapshot).
      ModuleVersion.safeParse(module.version).success
    ) {
      modules[name] = module.version;
    }
  }
  return modules;
}

/** Who gets into the editor, with what: members and owners deploy, viewers read. */
function editorRights(role: number | undefined, readOnly = false): "*" | "read" | undefined {
  if (role === undefined || role < Role.viewer) return undefined;
  return role >= Role.member && !readOnly ? "*" : "read";
}

export async function instanceStorageRoutes(app: FastifyInstance, opts: InstanceStorageOptions) {
  /** The instance each request's token belongs to, set by the hook below. */
  const callers = new WeakMap<FastifyRequest, CallingInstance>();

  // Who calls is decided before the body is read (this context's own onRequest hook): a caller
  // without the token of the instance the path names is refused at once, so nobody else can make
  // the platform buffer and parse the 20 MiB a flow may be (issue 32: ten such unauthenticated
  // posts exhausted the heap).
  app.addHook("onRequest", async (request, reply) => {
    const { instanceId } = request.params as { instanceId?: string };
    const token = bearerToken(request.headers.authorization);
    const project =
      token && parseToken(token) === "instance"
        ? await findProjectByToken(opts.db, tokenDigest(opts.tokenSecret, token))
        : undefined;
    if (!project || project.id !== instanceId) {
      const { status, body } = toErrorResponse(unauthorized(), request.id);
      return reply.code(status).send(body);
    }
    callers.set(request, project);
  });

  /** The instance the token belongs to (the hook has refused every other caller). */
  async function guard(request: FastifyRequest, _reply: FastifyReply) {
    return callers.get(request);
  }

  function parse<T>(schema: z.ZodType<T>, body: unknown): T {
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw validationError(parsed.error);
    return parsed.data;
  }

  // Node-RED's own calls: not counted against people's limits. Flows can be large.
  const config = { rateLimit: false as const };
  const bodyLimit = 20 * 1024 * 1024;

  app.get("/storage/:instanceId/:kind", { config }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    const entry = KINDS[(request.params as { kind: string }).kind];
    if (!entry) throw new ApiError(404, "not_found", "Not Found");
    return reply.send(await readProjectStorage(opts.db, project.id, entry.kind));
  });

  app.post("/storage/:instanceId/:kind", { config, bodyLimit }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    const entry = KINDS[(request.params as { kind: string }).kind];
    if (!entry) throw new ApiError(404, "not_found", "Not Found");
    const value = parse(entry.schema, request.body);
    await writeProjectStorage(opts.db, project.id, entry.kind, value);
    // Node-RED's node list says what its palette installed: the platform keeps that list.
    if (entry.kind === "settings") {
      const modules = paletteModules((value as Record<string, unknown>).nodes);
      if (modules) await setProjectPaletteModules(opts.db, project.id, modules);
    }
    return reply.code(204).send();
  });

  // The library: a file's body, or a directory's entries (sub-directories as names, files as
  // `{ fn, …meta }`), as Node-RED's own file storage answers.
  app.get("/storage/:instanceId/library/:type", { config }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    const type = parse(LibraryType, (request.params as { type: string }).type);
    const path = parse(LibraryPath, (request.query as { path?: string }).path ?? "");
    const entries = await readLibraryEntries(opts.db, project.id);
    const file = entries[`${type}/${path}`];
    // JSON, as every answer here: the client parses it back to the body's text.
    if (file && path !== "") return reply.type("application/json").send(JSON.stringify(file.body));
    const prefix = `${type}/${path === "" || path.endsWith("/") ? path : `${path}/`}`;
    const dirs = new Set<string>();
    const files: Record<string, unknown>[] = [];
    for (const [key, value] of Object.entries(entries)) {
      if (!key.startsWith(prefix)) continue;
      const rest = key.slice(prefix.length);
      const slash = rest.indexOf("/");
      if (slash >= 0) dirs.add(rest.slice(0, slash));
      else files.push({ ...value.meta, fn: rest });
    }
    if (dirs.size === 0 && files.length === 0 && path !== "") {
      throw new ApiError(404, "not_found", "Not Found");
    }
    return reply.send([...[...dirs].sort(), ...files]);
  });

  app.post("/storage/:instanceId/library/:type", { config, bodyLimit }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    const type = parse(LibraryType, (request.params as { type: string }).type);
    const { path, meta, body } = parse(LibraryEntry, request.body);
    await writeLibraryEntry(opts.db, project.id, `${type}/${path}`, { meta, body });
    return reply.code(204).send();
  });

  // The editor's sign-in. 200 `{ username, permissions, token }` lets the person in: the token
  // is an editor session of the platform's (`fpe_…`, bound to this instance), which Node-RED hands
  // to the editor instead of a session of its own, so that each later request of the editor comes
  // back here (`/auth/token`) and is decided by the rules of the moment: the role in the team, a
  // suspension, an expired password, a password change or a removal (which end the session).
  // Anything but 200 keeps the person out.
  const refused = () => new ApiError(403, "forbidden", "Not a member of the instance's team");
  const expired = () =>
    new ApiError(403, "password_expired", "Your password has expired: choose a new one first");

  app.post("/storage/:instanceId/auth/password", { config }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    const { username, password } = parse(
      z.strictObject({ username: z.string().max(256), password: z.string().max(1024) }),
      request.body,
    );
    // Counted per instance (all of them call from 127.0.0.1) and per account.
    const user = await checkCredentials(
      opts,
      request,
      username,
      password,
      `instance:${project.id}`,
    );
    if (user.password_expired) throw expired();
    const found = await findTeamForUser(opts.db, project.team_id, user.id);
    const permissions = editorRights(found?.role);
    if (!permissions) throw refused();
    const token = generateToken("editorSession");
    await insertSession(opts.db, {
      userId: user.id,
      digest: tokenDigest(opts.tokenSecret, token),
      expiresAt: new Date(Date.now() + opts.editorSessionMaxAgeMs),
      projectId: project.id,
    });
    return reply.send({ username: user.username, permissions, token });
  });

  app.post("/storage/:instanceId/auth/token", { config }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    // `check`: platform.cjs asking whether an open editor's session still holds (no activity).
    const { token, check } = parse(
      z.strictObject({ token: z.string().max(1024), check: z.boolean().optional() }),
      request.body,
    );
    if (parseToken(token) === "editorSession") {
      const session = await opts.authenticator.authenticateEditor(token, project.id, !check);
      if (!session) throw unauthorized();
      if (session.passwordExpired) throw expired();
      const permissions = editorRights(session.role);
      if (!permissions) throw refused();
      return reply.send({ username: session.username, permissions, session: true });
    }
    const authenticated = await opts.authenticator.authenticate(`Bearer ${token}`, {
      teamId: project.team_id,
    });
    if (!authenticated) throw unauthorized();
    const { identity, team } = authenticated;
    const permissions =
      tokenReachesTeam(identity.scope, project.team_id) &&
      editorRights(team?.found?.role, identity.scope.readOnly);
    if (!permissions) throw refused();
    return reply.send({ username: identity.username, permissions });
  });

  // Signing out in the editor (Node-RED's /auth/revoke, passed on by platform.cjs): the editor
  // session ends here too, so the token is worthless to whoever still holds it. Another kind of
  // token (a person's own access token used as the editor's bearer) is theirs, and stays.
  app.post("/storage/:instanceId/auth/revoke", { config }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    const { token } = parse(z.strictObject({ token: z.string().max(1024) }), request.body);
    if (parseToken(token) === "editorSession") {
      await deleteEditorSession(opts.db, tokenDigest(opts.tokenSecret, token), project.id);
    }
    return reply.code(204).send();
  });

  // Node-RED asks again for a user it has a session for (after it restarts).
  app.post("/storage/:instanceId/auth/user", { config }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    const { username } = parse(z.strictObject({ username: z.string().max(256) }), request.body);
    const user = await findUserByLogin(opts.db, username);
    const found =
      user && !user.suspended && (await findTeamForUser(opts.db, project.team_id, user.id));
    const permissions = found ? editorRights(found.role) : undefined;
    if (!user || !permissions) throw refused();
    return reply.send({ username: user.username, permissions });
  });
}

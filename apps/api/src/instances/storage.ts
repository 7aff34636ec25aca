// What a hosted instance's Node-RED calls (packages/runtime/src/local/node-red/platform.cjs), under
// /storage/<instanceId>/ as FlowFuse's storage API: its flows, credentials, settings and library,
// kept in the platform's database; and its editor's sessions (editor-sign-in.ts). Every
// call needs the instance's own token (`fpi_…`, a new one for each start of its Node-RED), which
// reaches this instance's routes and nothing else. Not in the OpenAPI document: not for people.
import { bearerToken, parseToken, tokenDigest } from "@flowplane/auth";
import { ModuleName, ModuleVersion } from "@flowplane/contract";
import {
  findProjectByToken,
  listProjectLibraryEntries,
  findProjectStorage,
  setProjectPaletteModules,
  type StorageKind,
  writeLibraryEntry,
  writeProjectStorage,
} from "@flowplane/db";
import type { InstanceOfToken } from "@flowplane/db";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { ApiError, toErrorResponse, unauthorized, validationError } from "../core/errors";
import { type EditorSignInOptions, editorSessionRoutes } from "./editor-sign-in";
import { recordInstanceEvent } from "./events";

export type InstanceStorageOptions = EditorSignInOptions;

/** The instance whose token a request carries. */
type CallingInstance = InstanceOfToken;

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
  async function guard(
    request: FastifyRequest,
    _reply: FastifyReply,
  ): Promise<InstanceOfToken | undefined> {
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
    return reply.send(await findProjectStorage(opts.db, project.id, entry.kind));
  });

  app.post("/storage/:instanceId/:kind", { config, bodyLimit }, async (request, reply) => {
    const project = await guard(request, reply);
    if (!project) return reply;
    const entry = KINDS[(request.params as { kind: string }).kind];
    if (!entry) throw new ApiError(404, "not_found", "Not Found");
    const value = parse(entry.schema, request.body);
    await opts.db.transaction().execute(async (trx) => {
      await writeProjectStorage(trx, project.id, entry.kind, value);
      // Node-RED saves its flows when they are deployed: FlowFuse's `flows.set`, in the
      // instance's log (Node-RED does not say who deployed them).
      if (entry.kind === "flows") {
        await recordInstanceEvent(trx, "flows.set", "system", project);
      }
    });
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
    const entries = await listProjectLibraryEntries(opts.db, project.id);
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

  editorSessionRoutes(app, opts, guard);
}

// An instance's snapshots on its page: taking one, rolling the instance back to one, exporting
// one (a JSON file to download, its credentials encrypted with the secret the person gives) and
// importing an export — from a file (a multipart form, which works without script) or pasted.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { invalidRequest } from "../../core/errors";
import { field, formError } from "../../pages/forms";
import type { PageDeps } from "../../pages/page";
import {
  callerOf,
  instanceOf,
  type InstanceParams,
  instancePath,
  onInstance,
  renderInstance,
} from "./instance-render";

type SnapshotParams = InstanceParams & { snapshotId: string };

/** The largest export the import form takes: what the API itself takes as a JSON body. */
const IMPORT_LIMIT = 1024 * 1024;

/** A multipart form's fields as strings, its files' contents read as text. */
async function multipartFields(request: FastifyRequest, body: Buffer) {
  const type = request.headers["content-type"] ?? "";
  const form = await new Response(new Uint8Array(body), {
    headers: { "content-type": type },
  }).formData();
  const fields: Record<string, string> = {};
  for (const [name, value] of form) {
    if (name in fields) continue;
    fields[name] = typeof value === "string" ? value : await value.text();
  }
  return fields;
}

const notAnExport = () =>
  invalidRequest("Not a snapshot's export: give the JSON file an export downloaded", [
    { path: "snapshot", message: "Not a snapshot's export (JSON)" },
  ]);

/** An export as the import takes it: what it names of the snapshot, nothing of who made it. */
function importable(text: string) {
  let exported: unknown;
  try {
    exported = JSON.parse(text);
  } catch {
    throw notAnExport();
  }
  if (typeof exported !== "object" || exported === null) throw notAnExport();
  const { name, description, flows, settings } = exported as Record<string, unknown>;
  const given = (settings ?? {}) as Record<string, unknown>;
  return {
    name,
    description,
    flows,
    settings: {
      settings: given.settings,
      env: given.env,
      hiddenEnv: given.hiddenEnv,
      secretEnv: given.secretEnv,
      modules: given.modules,
    },
  } as never;
}

/** A safe file name for a download: letters, digits, '-' and '_'. */
const fileName = (name: string) => name.replace(/[^\w-]+/g, "-").slice(0, 80) || "snapshot";

export function instanceSnapshotPages(app: FastifyInstance, deps: PageDeps, route: object) {
  app.post<{ Params: InstanceParams }>(
    "/teams/:teamId/instances/:instanceId/snapshots",
    route,
    (request, reply) => {
      const name = field(request.body, "name") ?? "";
      const description = field(request.body, "description") ?? "";
      const form = { form: "snapshot" as const, values: { name, description }, done: "snapshot" };
      return onInstance(deps, request, reply, form, (caller, instance) =>
        caller.snapshots.create({
          instanceId: instance.id,
          name,
          ...(description.trim() !== "" && { description }),
        }),
      );
    },
  );

  app.post<{ Params: SnapshotParams }>(
    "/teams/:teamId/instances/:instanceId/snapshots/:snapshotId/rollback",
    route,
    (request, reply) => {
      const snapshot = request.params.snapshotId;
      const form = { form: "rollback" as const, values: { row: snapshot }, done: "rolled-back" };
      return onInstance(deps, request, reply, form, (caller, instance) =>
        caller.snapshots.rollback({ instanceId: instance.id, snapshot }),
      );
    },
  );

  // The export is the reply itself: a file the browser saves (no page to go back to).
  app.post<{ Params: SnapshotParams }>(
    "/teams/:teamId/instances/:instanceId/snapshots/:snapshotId/export",
    route,
    async (request, reply) => {
      const caller = callerOf(deps, request);
      const credentialSecret = field(request.body, "credentialSecret") ?? "";
      try {
        const instance = await instanceOf(caller, request.params);
        const exported = await caller.snapshots.exportOfInstance({
          instanceId: instance.id,
          snapshotId: request.params.snapshotId,
          credentialSecret,
        });
        return reply
          .header("cache-control", "no-store")
          .header(
            "content-disposition",
            `attachment; filename="${fileName(`${instance.name}-${exported.name}`)}.json"`,
          )
          .type("application/json; charset=utf-8")
          .send(JSON.stringify(exported, null, 2));
      } catch (error) {
        return renderInstance(deps, request, reply, {
          form: "export",
          error: formError(request, reply, error),
          values: { row: request.params.snapshotId },
        });
      }
    },
  );

  // The import takes a file: a multipart form, parsed here only (the pages' other forms are
  // URL-encoded), up to the size of a JSON body the API takes. Pasted text works as well.
  app.register(async (scope) => {
    scope.addContentTypeParser(
      "multipart/form-data",
      { parseAs: "buffer", bodyLimit: IMPORT_LIMIT },
      (request, body, done) => {
        multipartFields(request, body as Buffer).then(
          (fields) => done(null, fields),
          () => done(invalidRequest("The form could not be read"), undefined),
        );
      },
    );
    scope.post<{ Params: InstanceParams }>(
      "/teams/:teamId/instances/:instanceId/snapshots/import",
      route,
      async (request, reply) => {
        const caller = callerOf(deps, request);
        const file = field(request.body, "file") ?? "";
        const pasted = field(request.body, "snapshot") ?? "";
        const credentialSecret = field(request.body, "credentialSecret") ?? "";
        try {
          const instance = await instanceOf(caller, request.params);
          const text = file.trim() !== "" ? file : pasted;
          if (text.trim() === "") throw notAnExport();
          await caller.snapshots.import({
            ownerId: instance.id,
            ownerType: "instance",
            snapshot: importable(text),
            ...(credentialSecret !== "" && { credentialSecret }),
          });
        } catch (error) {
          return renderInstance(deps, request, reply, {
            form: "import",
            error: formError(request, reply, error),
            values: { snapshot: file.trim() !== "" ? "" : pasted },
          });
        }
        return reply.redirect(`${instancePath(request.params)}?done=imported`, 303);
      },
    );
  });
}

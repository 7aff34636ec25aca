// An instance's environment variables on its page: adding one, changing one's value, deleting
// one. Each sends the instance's whole list to the API's update (`settings.env`, members and
// owners), as the API takes it: a hidden variable sent with an empty value keeps its value, and
// the platform's `FF_*` variables are not the instance's to write.
import type { EnvVar } from "@flowplane/contract";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { invalidRequest } from "../../core/errors";
import { field } from "../../pages/forms";
import type { PageDeps } from "../../pages/page";
import { type InstanceForm, type InstanceParams, onInstance } from "./instance-render";

type Request = FastifyRequest<{ Params: InstanceParams }>;

/** The instance's own variables as they are sent back: hidden ones blank (kept as they are). */
const ownVariables = (env: EnvVar[]): EnvVar[] =>
  env
    .filter((variable) => !variable.name.startsWith("FF_"))
    .map(({ name, value, hidden }) => ({ name, value, hidden: hidden ?? false }));

const noSuchVariable = () =>
  invalidRequest("No such variable", [{ path: "name", message: "No such variable" }]);

export function instanceEnvPages(app: FastifyInstance, deps: PageDeps, route: object) {
  /** Changes the instance's list and sends it; on failure the page with the form's error. */
  const changeEnv = (
    request: Request,
    reply: FastifyReply,
    form: { form: InstanceForm; values: Record<string, string>; done: string },
    change: (env: EnvVar[]) => EnvVar[],
  ) =>
    onInstance(
      deps,
      request,
      reply,
      form,
      (caller, instance) =>
        caller.instances.update({
          instanceId: instance.id,
          settings: { env: change(ownVariables(instance.settings.env)) },
        }),
      (failed) => {
        // The API names a field of the list (`settings.env.3.name`): the form's is `name`.
        for (const [path, message] of Object.entries(failed.fields)) {
          const key = /^settings\.env\.\d+\.(\w+)$/.exec(path)?.[1];
          if (key) failed.fields[key] ??= message;
        }
      },
    );

  app.post<{ Params: InstanceParams }>(
    "/teams/:teamId/instances/:instanceId/env",
    route,
    (request, reply) => {
      const variable = {
        name: (field(request.body, "name") ?? "").trim(),
        value: field(request.body, "value") ?? "",
        hidden: field(request.body, "hidden") === "yes",
      };
      const values = { name: variable.name, value: variable.hidden ? "" : variable.value };
      return changeEnv(request, reply, { form: "env-add", values, done: "env-added" }, (env) => {
        if (env.some((other) => other.name === variable.name)) {
          throw invalidRequest("The instance has a variable of that name: change its value", [
            { path: "name", message: "Already a variable of the instance" },
          ]);
        }
        return [...env, variable];
      });
    },
  );

  app.post<{ Params: InstanceParams }>(
    "/teams/:teamId/instances/:instanceId/env/change",
    route,
    (request, reply) => {
      const name = field(request.body, "name") ?? "";
      const value = field(request.body, "value") ?? "";
      const form = {
        form: "env-change" as const,
        values: { row: name, value },
        done: "env-changed",
      };
      return changeEnv(request, reply, form, (env) => {
        if (!env.some((variable) => variable.name === name)) throw noSuchVariable();
        return env.map((variable) => (variable.name === name ? { ...variable, value } : variable));
      });
    },
  );

  app.post<{ Params: InstanceParams }>(
    "/teams/:teamId/instances/:instanceId/env/delete",
    route,
    (request, reply) => {
      const name = field(request.body, "name") ?? "";
      const form = { form: "env-change" as const, values: { row: name }, done: "env-deleted" };
      return changeEnv(request, reply, form, (env) => {
        if (!env.some((variable) => variable.name === name)) throw noSuchVariable();
        return env.filter((variable) => variable.name !== name);
      });
    },
  );
}

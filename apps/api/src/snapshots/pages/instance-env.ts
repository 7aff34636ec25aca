// An instance's environment variables on its page: adding one, changing one's value, deleting
// one. Each sends the instance's whole list to the API's update (`settings.env`, members and
// owners), as the API takes it: a hidden variable sent with an empty value keeps its value, and
// the platform's `FF_*` variables are not the instance's to write.
import type { EnvVar } from "@flowplane/contract";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { invalidRequest } from "../../core/errors";
import { field, formError } from "../../pages/forms";
import type { PageDeps } from "../../pages/page";
import {
  callerOf,
  type InstanceForm,
  instanceOf,
  type InstanceParams,
  instancePath,
  renderInstance,
} from "./instance-render";

type Request = FastifyRequest<{ Params: InstanceParams }>;

/** The instance's own variables as they are sent back: hidden ones blank (kept as they are). */
const ownVariables = (env: EnvVar[]): EnvVar[] =>
  env
    .filter((variable) => !variable.name.startsWith("FF_"))
    .map(({ name, value, hidden }) => ({ name, value, hidden: hidden ?? false }));

const noSuchVariable = () =>
  invalidRequest("No such variable", [{ path: "name", message: "No such variable" }]);

export function instanceEnvPages(app: FastifyInstance, deps: PageDeps, route: object) {
  /** Reads the instance, changes its list, sends it; on failure the page with the form's error. */
  async function changeEnv(
    request: Request,
    reply: FastifyReply,
    form: InstanceForm,
    values: Record<string, string>,
    change: (env: EnvVar[]) => EnvVar[],
    done: string,
  ) {
    const caller = callerOf(deps, request);
    try {
      const instance = await instanceOf(caller, request.params);
      const env = change(ownVariables(instance.settings.env));
      await caller.instances.update({ instanceId: instance.id, settings: { env } });
    } catch (error) {
      const failed = formError(request, reply, error);
      // The API names a field of the list (`settings.env.3.name`): the form's field is `name`.
      for (const [path, message] of Object.entries(failed.fields)) {
        const key = /^settings\.env\.\d+\.(\w+)$/.exec(path)?.[1];
        if (key) failed.fields[key] ??= message;
      }
      return renderInstance(deps, request, reply, { form, error: failed, values });
    }
    return reply.redirect(`${instancePath(request.params)}?done=${done}`, 303);
  }

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
      return changeEnv(
        request,
        reply,
        "env-add",
        values,
        (env) => {
          if (env.some((other) => other.name === variable.name)) {
            throw invalidRequest("The instance has a variable of that name: change its value", [
              { path: "name", message: "Already a variable of the instance" },
            ]);
          }
          return [...env, variable];
        },
        "env-added",
      );
    },
  );

  app.post<{ Params: InstanceParams }>(
    "/teams/:teamId/instances/:instanceId/env/change",
    route,
    (request, reply) => {
      const name = field(request.body, "name") ?? "";
      const value = field(request.body, "value") ?? "";
      return changeEnv(
        request,
        reply,
        "env-change",
        { row: name, value },
        (env) => {
          if (!env.some((variable) => variable.name === name)) throw noSuchVariable();
          return env.map((variable) =>
            variable.name === name ? { ...variable, value } : variable,
          );
        },
        "env-changed",
      );
    },
  );

  app.post<{ Params: InstanceParams }>(
    "/teams/:teamId/instances/:instanceId/env/delete",
    route,
    (request, reply) => {
      const name = field(request.body, "name") ?? "";
      return changeEnv(
        request,
        reply,
        "env-change",
        { row: name },
        (env) => {
          if (!env.some((variable) => variable.name === name)) throw noSuchVariable();
          return env.filter((variable) => variable.name !== name);
        },
        "env-deleted",
      );
    },
  );
}

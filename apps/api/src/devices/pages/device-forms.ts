// The forms of a device's page beyond its actions: its variables (PUT …/settings), its developer
// mode, its remote editor opened or closed, and its deletion (owners; asked first: the script's
// confirm(), or a page of its own without script). Each is the API's own procedure, called as the
// signed-in user, for a device of the page's team only (another team's is 404).
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from "fastify";
import { notFound } from "../../core/errors";
import { router } from "../../core/trpc";
import { field, type FormError, formError } from "../../pages/forms";
import { type PageDeps, sendFailure, sendPage } from "../../pages/page";
import { teamPlace, teamRouter } from "../../teams/index";
import { deviceSettingsProcedures } from "../device-settings";
import { deviceEditorProcedures } from "../editor/procedures";
import { deviceProcedures } from "../procedures";

// The same procedures under the same names as the API's router (rate limits count by them).
const deviceFormProcedures = router({
  team: teamRouter,
  devices: router({ ...deviceProcedures, ...deviceSettingsProcedures, ...deviceEditorProcedures }),
});

type Params = { teamId: string; deviceId: string };

interface EnvRow {
  name: string;
  value: string;
  hidden: boolean;
}

/** What the page shows again after a form failed: the variables as sent, and the errors. */
export interface DeviceFormState {
  env?: EnvRow[];
  envError?: FormError;
  editorError?: FormError;
  snapshotError?: FormError;
}

type Render = (
  request: FastifyRequest<{ Params: Params }>,
  reply: FastifyReply,
  actionError?: FormError,
  state?: DeviceFormState,
) => Promise<unknown>;

/** The most rows the variables' form sends (the ones shown and one more). */
const MAX_ROWS = 500;

/** The variables as the form sends them: rows `env-name-<i>`, `env-value-<i>`, `env-hidden-<i>`. */
function envOf(body: unknown): EnvRow[] {
  const rows: EnvRow[] = [];
  const count = Math.min(Number(field(body, "rows") ?? 0) || 0, MAX_ROWS);
  for (let index = 0; index < count; index++) {
    const name = (field(body, `env-name-${index}`) ?? "").trim();
    if (name === "") continue;
    rows.push({
      name,
      value: field(body, `env-value-${index}`) ?? "",
      hidden: field(body, `env-hidden-${index}`) !== undefined,
    });
  }
  return rows;
}

export function deviceFormRoutes(
  app: FastifyInstance,
  deps: PageDeps,
  route: RouteShorthandOptions,
  render: Render,
) {
  const pathOf = ({ teamId, deviceId }: Params) =>
    `/teams/${encodeURIComponent(teamId)}/devices/${encodeURIComponent(deviceId)}`;

  /** The caller, once the device is known to be the page's team's (else 404). */
  async function callerFor(request: FastifyRequest<{ Params: Params }>) {
    const caller = deviceFormProcedures.createCaller(deps.context(request));
    const device = await caller.devices.byId({ deviceId: request.params.deviceId });
    if (device.team.id !== request.params.teamId) throw notFound();
    return { caller, device };
  }

  type Caller = Awaited<ReturnType<typeof callerFor>>["caller"];

  /**
   * A form of the page: `run` calls the API; done, back to the page with `done`'s notice at
   * `anchor`; refused, the page again with the error where `failed` puts it (404 is the page's).
   */
  function form(
    name: string,
    run: (caller: Caller, deviceId: string, body: unknown) => Promise<string>,
    anchor: string,
    failed: (error: FormError, body: unknown) => DeviceFormState,
  ) {
    app.post<{ Params: Params }>(
      `/teams/:teamId/devices/:deviceId/${name}`,
      route,
      async (request, reply) => {
        let done: string;
        try {
          const { caller } = await callerFor(request);
          done = await run(caller, request.params.deviceId, request.body);
        } catch (error) {
          const refused = formError(request, reply, error);
          if (refused.status === 404) throw error;
          return render(request, reply, undefined, failed(refused, request.body));
        }
        return reply.redirect(`${pathOf(request.params)}?done=${done}#${anchor}`, 303);
      },
    );
  }

  const editorError = (error: FormError) => ({ editorError: error });
  form(
    "env",
    async (caller, deviceId, body) => {
      await caller.devices.updateSettings({ deviceId, env: envOf(body) });
      return "env";
    },
    "device-env",
    (envError, body) => ({ env: envOf(body), envError }),
  );
  form(
    "mode",
    async (caller, deviceId, body) => {
      const mode = field(body, "mode") === "developer" ? "developer" : "autonomous";
      await caller.devices.setMode({ deviceId, mode });
      return mode;
    },
    "device-editor",
    editorError,
  );
  form(
    "editor",
    async (caller, deviceId, body) => {
      const enabled = field(body, "enabled") === "yes";
      await caller.devices.setEditor({ deviceId, enabled });
      return enabled ? "editor-on" : "editor-off";
    },
    "device-editor",
    editorError,
  );

  app.post<{ Params: Params }>(
    "/teams/:teamId/devices/:deviceId/delete",
    route,
    async (request, reply) => {
      const { teamId, deviceId } = request.params;
      const back = { href: pathOf(request.params), label: "Back to the device" };
      try {
        const { caller, device } = await callerFor(request);
        if (field(request.body, "confirmed") !== "yes") {
          // No script ran to ask: ask on a page.
          const place = await teamPlace(caller.team, teamId);
          return sendPage(deps, request, reply, "devices/pages/device-delete", {
            title: "Delete a device",
            place,
            device,
          });
        }
        await caller.devices.delete({ deviceId });
      } catch (error) {
        return sendFailure(deps, request, reply, error, "The device was not deleted", back);
      }
      return reply.redirect(
        `/teams/${encodeURIComponent(teamId)}/devices?done=device-deleted`,
        303,
      );
    },
  );
}

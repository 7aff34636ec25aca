// A device's page (GET /teams/:teamId/devices/:deviceId): its state as its agent last reported it,
// when it was last seen, the snapshot it runs; the forms that restart, suspend and start its
// Node-RED through its agent; and its Node-RED log — the lines the platform keeps, in the page
// itself (so it reads without JavaScript), then followed live by the page's script over the log's
// Server-Sent Events; what it runs and is meant to run, and what owns it; its variables, developer
// mode and remote editor, its audit log, and its deletion (device-forms.ts). Everything is the
// API's own procedures, called as the signed-in user.
import type { Snapshot } from "@flowplane/contract";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, notFound } from "../../core/errors";
import { router } from "../../core/trpc";
import type { Context } from "../../core/trpc";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, type PageRoutes, sendPage, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { teamPlace, teamRouter } from "../../teams/index";
import { type DeviceAction, deviceActionProcedures } from "../actions";
import { deviceAuditLogProcedures } from "../audit-log";
import { deviceSettingsProcedures } from "../device-settings";
import { deviceEditorProcedures } from "../editor/procedures";
import { deviceLogProcedures } from "../logs";
import { deviceProcedures } from "../procedures";
import { deviceFormRoutes, type DeviceFormState } from "./device-forms";

// The same procedures under the same names as the API's router (rate limits count by them).
const deviceProceduresOfPage = router({
  team: teamRouter,
  devices: router({
    ...deviceProcedures,
    ...deviceActionProcedures,
    ...deviceLogProcedures,
    ...deviceSettingsProcedures,
    ...deviceEditorProcedures,
    ...deviceAuditLogProcedures,
  }),
});

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  deviceProceduresOfPage.createCaller(deps.context(request));

/** The actions the page offers, each with the notice that follows it. */
const ACTIONS: Record<DeviceAction, string> = {
  restart: "restarted",
  suspend: "suspended",
  start: "started",
};

const NOTICES: Record<string, string> = {
  restarted: "The device restarted its Node-RED.",
  suspended: "The device suspended its Node-RED.",
  started: "The device started its Node-RED.",
  env: "The variables are saved: the device restarts Node-RED with them at its next check-in.",
  developer: "Developer mode is on: the device keeps the flows deployed in its own editor.",
  autonomous: "Developer mode is off: the device runs its target snapshot again.",
  "editor-on": "The device's editor is open.",
  "editor-off": "The device's editor is closed.",
  snapshot: "The snapshot is taken: it keeps what the device runs now.",
};

/**
 * A device's snapshots, read and taken through the snapshots area's procedures — which import
 * this area, so the area that registers the page (snapshots) hands them in.
 */
export interface DeviceSnapshots {
  /** Newest first; `instance` for a device of an instance (its snapshots are the instance's). */
  list(context: Context, deviceId: string): Promise<Snapshot[] | "instance">;
  take(
    context: Context,
    deviceId: string,
    input: { name: string; setAsTarget: boolean },
  ): Promise<void>;
}

type Params = { teamId: string; deviceId: string };
type Query = { log?: string };

/** Audit entries on one page. */
const ENTRIES_SHOWN = 20;

/** The lines the page shows before its script follows the log. */
const LINES_SHOWN = 100;

/** A device's page, its forms and its snapshots (`snapshots`: see DeviceSnapshots). */
export function devicePages(snapshots: DeviceSnapshots): PageRoutes {
  return (app, deps) => devicePageRoutes(app, deps, snapshots);
}

function devicePageRoutes(app: FastifyInstance, deps: PageDeps, snapshots: DeviceSnapshots) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };
  const devicePage = ({ teamId, deviceId }: Params) =>
    `/teams/${encodeURIComponent(teamId)}/devices/${encodeURIComponent(deviceId)}`;

  async function renderDevice(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    actionError?: FormError,
    state: DeviceFormState = {},
  ) {
    const caller = callerOf(deps, request);
    const { teamId, deviceId } = request.params;
    const place = await teamPlace(caller.team, teamId);
    const device = await caller.devices.byId({ deviceId });
    // A device of another of the caller's teams is not this team's page.
    if (device.team.id !== teamId) throw notFound();
    let log: { lines: unknown[]; last: string } | undefined;
    let noComms = false;
    try {
      const page = await caller.devices.logs({ deviceId, limit: LINES_SHOWN });
      log = { lines: page.log, last: page.meta.next_cursor };
    } catch (error) {
      if (!(error instanceof ApiError && error.apiCode === "no_device_comms")) throw error;
      noComms = true;
    }
    const cursor = (request.query as Query | undefined)?.log;
    const [snapshotList, settings, editor, audit] = await Promise.all([
      snapshots.list(deps.context(request), deviceId),
      caller.devices.settings({ deviceId }),
      caller.devices.editor({ deviceId }),
      caller.devices.auditLog({
        deviceId,
        limit: ENTRIES_SHOWN,
        ...(typeof cursor === "string" && cursor !== "" && { cursor }),
      }),
    ]);
    const failed = actionError ?? state.envError ?? state.editorError ?? state.snapshotError;
    return sendPage(
      deps,
      request,
      reply,
      "devices/pages/device",
      {
        title: device.name,
        place,
        device,
        log,
        noComms,
        actions: Object.keys(ACTIONS),
        actionError,
        env: state.env ?? settings.env,
        envError: state.envError,
        editor,
        editorError: state.editorError,
        snapshots: snapshotList,
        snapshotError: state.snapshotError,
        audit: audit.log,
        olderLog: audit.meta.next_cursor,
        notice: failed ? undefined : noticeOf(request, NOTICES),
        script: "device-log.js",
      },
      failed?.status ?? 200,
    );
  }

  app.get<{ Params: Params }>("/teams/:teamId/devices/:deviceId", route, (request, reply) =>
    renderDevice(request, reply),
  );

  deviceFormRoutes(app, deps, route, renderDevice);

  // Taking a snapshot of what the device runs (members and up, an application's device).
  app.post<{ Params: Params }>(
    "/teams/:teamId/devices/:deviceId/snapshots",
    route,
    async (request, reply) => {
      const { teamId, deviceId } = request.params;
      const device = await callerOf(deps, request).devices.byId({ deviceId });
      if (device.team.id !== teamId) throw notFound();
      try {
        await snapshots.take(deps.context(request), deviceId, {
          name: field(request.body, "name") ?? "",
          setAsTarget: field(request.body, "setAsTarget") === "yes",
        });
      } catch (error) {
        const snapshotError = formError(request, reply, error);
        return renderDevice(request, reply, undefined, { snapshotError });
      }
      return reply.redirect(`${devicePage(request.params)}?done=snapshot#device-snapshots`, 303);
    },
  );

  app.post<{ Params: Params & { action: string } }>(
    "/teams/:teamId/devices/:deviceId/:action",
    route,
    async (request, reply) => {
      const { teamId, deviceId, action } = request.params;
      if (!Object.hasOwn(ACTIONS, action)) throw notFound();
      const caller = callerOf(deps, request);
      try {
        const device = await caller.devices.byId({ deviceId });
        if (device.team.id !== teamId) throw notFound();
        await caller.devices[action as DeviceAction]({ deviceId });
      } catch (error) {
        return renderDevice(request, reply, formError(request, reply, error));
      }
      return reply.redirect(
        `${devicePage(request.params)}?done=${ACTIONS[action as DeviceAction]}`,
        303,
      );
    },
  );
}

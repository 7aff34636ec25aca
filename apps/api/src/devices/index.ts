// The devices area: remote devices run by the FlowFuse device agent — their procedures, the
// team's provisioning tokens, the live routes the agent calls (outside tRPC, device tokens), a
// device's registration from its own terminal (its routes and the page a person completes it on).
import { DEVICE_ONLINE_MS } from "@flowplane/contract";
import { announceSilentDevicesOffline, deleteExpiredDeviceRegistrations } from "@flowplane/db";
import { router } from "../core/trpc";
import type { Area } from "../plugins/area";
import { deviceActionProcedures } from "./actions";
import { deviceAuditLogProcedures } from "./audit-log";
import { DeviceChannel } from "./channel";
import { deviceBulkProcedures } from "./bulk";
import { deviceSettingsProcedures } from "./device-settings";
import { devicesFrontDoor } from "./editor/front-door";
import { deviceEditorProcedures } from "./editor/procedures";
import { DEVICE_EDITOR_DOCS, editorTokenRoute, openEditorPage } from "./editor/routes";
import { deviceEditorOf } from "./editor/service";
import { deviceGroupsRouter } from "./groups";
import { deviceListProcedures } from "./lists";
import { deviceLiveRoutes } from "./live";
import { deviceLogProcedures } from "./logs";
import { DEVICE_LOG_STREAM_DOC, deviceLogStreamRoute } from "./logs-stream";
import { DEVICE_LIVE_DOCS } from "./live-schemas";
import { devicesPages } from "./pages/devices";
import { newDevicePages } from "./pages/new-device";
import { provisioningPages } from "./pages/provisioning";
import { registrationPages } from "./pages/register";
import { deviceProcedures } from "./procedures";
import { provisioningRouter } from "./provisioning";
import { probeOnFrontPage } from "./provisioning-probe";
import {
  DEVICE_REGISTRATION_DOCS,
  deviceRegistrationRoutes,
  registrationStatusRoute,
} from "./registration";

export const devices = {
  procedures: {
    devices: router({
      ...deviceProcedures,
      ...deviceSettingsProcedures,
      ...deviceAuditLogProcedures,
      ...deviceListProcedures,
      ...deviceBulkProcedures,
      ...deviceEditorProcedures,
      ...deviceActionProcedures,
      ...deviceLogProcedures,
    }),
    provisioningTokens: provisioningRouter,
    deviceGroups: deviceGroupsRouter,
  },
  /**
   * The agent's check of the base URL with its provisioning token, before it provisions; and,
   * when the platform has a broker, the devices' live channel over it.
   */
  /** The remote editors: the agents' tunnels and the devices' editor hosts. */
  frontDoor: devicesFrontDoor,
  async start(app, { authenticator, db, services, options }) {
    probeOnFrontPage(app, authenticator);
    if (!services.brokerTransport) return;
    const channel = new DeviceChannel(db, services.brokerTransport, app.log);
    await channel.start();
    app.addHook("onClose", async () => channel.close());
    const reconcile = () => {
      channel.reconcile().catch((error: unknown) => {
        app.log.error({ err: error }, "devices' targets not pushed");
      });
    };
    return {
      deviceChannel: channel,
      deviceEditor: deviceEditorOf(options),
      afterMutation: [...(services.afterMutation ?? []), reconcile],
    };
  },
  /**
   * What the device agent calls, with the device's own token, and a device's registration from
   * its terminal (anonymous, limited per address).
   */
  async machines(app, { db, tokenSecret, limits, options, baseUrl, services }) {
    await app.register(deviceLiveRoutes, {
      db,
      tokenSecret,
      baseUrl,
      // A device a rollout watches failed: the rollout moves on at once, not at its next tick.
      rolloutChanged: () => services.rollouts?.poke(),
    });
    await app.register(editorTokenRoute, { db, editor: deviceEditorOf(options) });
    await app.register(deviceRegistrationRoutes, {
      db,
      tokenSecret,
      rateLimit: limits.deviceRegistration,
    });
  },
  /** Whether a registration is still waiting, for the person completing it; a device's log live. */
  api: async (app, platform) => {
    await registrationStatusRoute(app, platform);
    await deviceLogStreamRoute(app, platform, platform.options.deviceLogStream);
  },
  /**
   * The registration's page, where a signed-in person completes it; a device's page; a device's
   * editor opened.
   */
  pages: ({ options }) => {
    const openEditor = openEditorPage(deviceEditorOf(options));
    return (app, deps) => {
      registrationPages(app, deps);
      devicesPages(app, deps);
      newDevicePages(app, deps);
      provisioningPages(app, deps);
      openEditor(app, deps);
    };
  },
  /** The routes outside tRPC under /api/v1, for the OpenAPI document. */
  docs: [
    ...DEVICE_LIVE_DOCS,
    ...DEVICE_REGISTRATION_DOCS,
    ...DEVICE_EDITOR_DOCS,
    DEVICE_LOG_STREAM_DOC,
  ],
  sweep: async ({ db }) => {
    await deleteExpiredDeviceRegistrations(db);
    // A device that polls over HTTP is offline once silent as long as the API shows it online.
    await announceSilentDevicesOffline(db, DEVICE_ONLINE_MS);
  },
} satisfies Area;
export { DEFAULT_DEVICE_NODE_RED } from "./live";
export { deviceOf, deviceProcedures } from "./procedures";
export { type DeviceSnapshots, devicePages } from "./pages/device";
export { deviceEnv } from "./settings";
export { groupSummary } from "./groups";
export { deviceSummary, deviceView } from "./views";
export { deviceGroupPages } from "./pages/groups";
export { deviceGroupsRouter } from "./groups";
export { deviceListProcedures } from "./lists";
export { withoutHealthTab } from "./health-tab";

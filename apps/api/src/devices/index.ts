// The devices area: remote devices run by the FlowFuse device agent — their procedures, the
// team's provisioning tokens, the live routes the agent calls (outside tRPC, device tokens), a
// device's registration from its own terminal (its routes and the page a person completes it on).
import type { FastifyInstance } from "fastify";
import type { RateLimitOptions as RouteRateLimit } from "@fastify/rate-limit";
import type { Db } from "@flowplane/db";
import { router } from "../core/trpc";
import { deviceGroupsRouter } from "./groups";
import { DEVICE_LIVE, deviceLiveRoutes } from "./live";
import { DEVICE_LIVE_DOCS } from "./live-schemas";
import { deviceAuditLogProcedures } from "./audit-log";
import { deviceBulkProcedures } from "./bulk";
import { deviceSettingsProcedures } from "./device-settings";
import { deviceListProcedures } from "./lists";
import { registrationPages } from "./pages/register";
import { deviceProcedures } from "./procedures";
import { provisioningRouter } from "./provisioning";
import { provisioningProbe } from "./provisioning-probe";
import {
  DEVICE_REGISTRATION_DOCS,
  DEVICE_REGISTRATION_OPEN,
  deviceRegistrationRoutes,
} from "./registration";

export const devices = {
  procedures: {
    devices: router({
      ...deviceProcedures,
      ...deviceSettingsProcedures,
      ...deviceAuditLogProcedures,
      ...deviceListProcedures,
      ...deviceBulkProcedures,
    }),
    provisioningTokens: provisioningRouter,
    deviceGroups: deviceGroupsRouter,
  },
  /**
   * Routes outside tRPC: what the device agent calls, with the device's own token, and a device's
   * registration from its terminal.
   */
  routes: async (
    app: FastifyInstance,
    opts: { db: Db; tokenSecret: string; registrationLimit: RouteRateLimit },
  ) => {
    await app.register(deviceLiveRoutes, opts);
    await app.register(deviceRegistrationRoutes, { ...opts, rateLimit: opts.registrationLimit });
  },
  /** Those routes under /api/v1, for the OpenAPI document. */
  docs: [...DEVICE_LIVE_DOCS, ...DEVICE_REGISTRATION_DOCS],
  /** The paths whose routes guard themselves (the live routes) or take anyone (registration's). */
  ownPaths: [DEVICE_LIVE, DEVICE_REGISTRATION_OPEN],
  /** The agent's check of the base URL with its provisioning token, before it provisions. */
  provisioningProbe,
  /** The registration's page, where a signed-in person completes it. */
  pages: registrationPages,
};
export { DEFAULT_DEVICE_NODE_RED } from "./live";
export { deviceOf } from "./procedures";
export { deviceEnv } from "./settings";
export { groupSummary } from "./groups";
export { deviceSummary, deviceView } from "./views";

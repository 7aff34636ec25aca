// The devices area: remote devices run by the FlowFuse device agent — their procedures, the
// team's provisioning tokens, and the live routes the agent calls (outside tRPC, device tokens).
import { router } from "../core/trpc";
import { deviceGroupsRouter } from "./groups";
import { DEVICE_LIVE, deviceLiveRoutes } from "./live";
import { deviceAuditLogProcedures } from "./audit-log";
import { deviceBulkProcedures } from "./bulk";
import { deviceSettingsProcedures } from "./device-settings";
import { deviceListProcedures } from "./lists";
import { deviceProcedures } from "./procedures";
import { provisioningRouter } from "./provisioning";

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
  /** Routes outside tRPC: what the device agent calls, with the device's own token. */
  routes: deviceLiveRoutes,
  /** The paths those routes guard themselves. */
  ownPaths: DEVICE_LIVE,
};

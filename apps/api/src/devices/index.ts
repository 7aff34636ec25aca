// The devices area: remote devices run by the FlowFuse device agent — their procedures, the
// team's provisioning tokens, and the live routes the agent calls (outside tRPC, device tokens).
import { DEVICE_LIVE, deviceLiveRoutes } from "./live";
import { devicesRouter } from "./procedures";
import { provisioningRouter } from "./provisioning";

export const devices = {
  procedures: { devices: devicesRouter, provisioningTokens: provisioningRouter },
  /** Routes outside tRPC: what the device agent calls, with the device's own token. */
  routes: deviceLiveRoutes,
  /** The paths those routes guard themselves. */
  ownPaths: DEVICE_LIVE,
};

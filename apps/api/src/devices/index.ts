// The devices area: remote devices run by the FlowFuse device agent — their procedures, the
// team's provisioning tokens.
import { devicesRouter } from "./procedures";
import { provisioningRouter } from "./provisioning";

export const devices = {
  procedures: { devices: devicesRouter, provisioningTokens: provisioningRouter },
};

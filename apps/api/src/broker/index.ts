// The broker area: the team broker's MQTT clients (procedures), who may connect and what they may
// do (access.ts), the embedded broker and the callbacks an external one asks (outside tRPC).
import { BROKER_CALLBACKS, brokerCallbackRoutes } from "./callbacks";
import { brokerRouter } from "./procedures";

export const broker = {
  procedures: { broker: brokerRouter },
  /** Routes outside tRPC: an external broker's authentication and ACL callbacks. */
  routes: brokerCallbackRoutes,
  /** The paths those routes guard themselves. */
  ownPaths: BROKER_CALLBACKS,
};
export {
  type BrokerOptions,
  type FailedConnectLimits,
  startTeamBroker,
  type TeamBroker,
} from "./team-broker";

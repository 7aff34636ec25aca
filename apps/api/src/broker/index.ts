// The broker area: the team broker's MQTT clients (procedures), who may connect and what they may
// do (access.ts), the embedded broker and the callbacks an external one asks (outside tRPC), and
// the team's broker page.
import type { Area } from "../plugins/area";
import { brokerCallbackRoutes } from "./callbacks";
import { brokerPages } from "./pages/broker";
import { brokerRouter } from "./procedures";
import { startTeamBroker } from "./team-broker";

export const broker = {
  procedures: { broker: brokerRouter },
  /** The team broker, when the platform has one: embedded, or an external one's access. */
  async start(app, { options, db, tokenSecret }) {
    if (!options.broker) return;
    const teamBroker = await startTeamBroker(app, options.broker, {
      db,
      tokenSecret,
      trustProxy: options.trustProxy,
    });
    return {
      broker: teamBroker.access,
      brokerEndpoint: teamBroker.endpoint,
      brokerTransport: teamBroker.transport,
    };
  },
  /** An external broker's authentication and ACL callbacks, with a broker token. */
  async machines(app, { db, tokenSecret, services }) {
    if (services.broker)
      await brokerCallbackRoutes(app, { db, tokenSecret, access: services.broker });
  },
  /** The team's broker page: its clients, creating one, its ACLs, deleting it. */
  pages: () => brokerPages,
} satisfies Area;
export type { BrokerOptions, FailedConnectLimits } from "./team-broker";
export type { PlatformTransport } from "./transport";

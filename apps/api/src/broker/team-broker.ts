// The team broker's runtime: the access service every front end asks (access.ts), and, in
// embedded mode, the aedes broker in this process (embedded.ts), closed with the server; in
// external mode, the platform's own client of that broker (external.ts), for the devices' channel.
import type { Db } from "@flowplane/db";
import type { FastifyInstance } from "fastify";
import type { Context } from "../core/trpc";
import type { TrustProxy } from "../env";
import { BrokerAccess, type FailureLimit } from "./access";
import { type EmbeddedBroker, startEmbeddedBroker } from "./embedded";
import { connectExternalBroker } from "./external";
import type { PlatformTransport } from "./transport";

export type BrokerOptions =
  /** aedes in this process: MQTT over TCP on host:port (0: a free port) and over WebSocket on
   *  this server at /mqtt; retained messages and sessions kept in `dataDir`. */
  | {
      mode: "embedded";
      host: string;
      port: number;
      dataDir?: string;
      /** The default port only: when it is taken, take a free one and say so. */
      fallBackWhenTaken?: boolean;
      /** The file the default port's choice is kept in, to be taken again at every start. */
      keepPortIn?: string;
      /** What GET /settings tells clients, when not `mqtt://host:port` (e.g. behind a proxy). */
      url?: string;
      failedConnects?: FailedConnectLimits;
    }
  /** An external broker (EMQX) asks POST /api/comms/v2/auth and /acls; clients go to `url`. */
  | {
      mode: "external";
      url: string;
      /** Where the platform itself reaches the broker, when not at `url` (e.g. inside a cluster). */
      platformUrl?: string;
      failedConnects?: FailedConnectLimits;
    };

/** Failed CONNECTs allowed per client username and per address before refusing unchecked. */
export interface FailedConnectLimits {
  perClient?: FailureLimit;
  perAddress?: FailureLimit;
}

export interface TeamBroker {
  access: BrokerAccess;
  /** Where clients reach it, for GET /settings. */
  endpoint: NonNullable<Context["brokerEndpoint"]>;
  /** The platform's own side of it, for the devices' channel. */
  transport?: PlatformTransport;
}

export async function startTeamBroker(
  app: FastifyInstance,
  options: BrokerOptions,
  platform: { db: Db; tokenSecret: string; trustProxy?: TrustProxy },
): Promise<TeamBroker> {
  const access = new BrokerAccess(platform.db, platform.tokenSecret, {
    failuresPerClient: options.failedConnects?.perClient,
    failuresPerAddress: options.failedConnects?.perAddress,
  });
  if (options.mode === "external") {
    const transport = await connectExternalBroker({
      url: options.platformUrl ?? options.url,
      tokenSecret: platform.tokenSecret,
      log: app.log,
    });
    app.addHook("onClose", () => transport.close());
    return {
      access,
      endpoint: { host: new URL(options.url).hostname, url: options.url },
      transport,
    };
  }
  const embedded = await startEmbeddedBroker({
    access,
    dataDir: options.dataDir,
    host: options.host,
    port: options.port,
    fallBackWhenTaken: options.fallBackWhenTaken,
    keepPortIn: options.keepPortIn,
    log: app.log,
  });
  embedded.attachWebSocket(app.server, platform.trustProxy);
  app.addHook("onClose", () => embedded.close());
  app.decorate("mqttPort", embedded.port);
  app.decorate("embeddedBroker", embedded);
  const url = options.url ?? `mqtt://${embedded.host}:${embedded.port}`;
  return { access, endpoint: { host: new URL(url).hostname, url }, transport: embedded };
}

declare module "../plugins/area" {
  interface AppOptions {
    /** The team broker (none: no broker; the client routes still keep credentials). */
    broker?: BrokerOptions;
  }
}

declare module "fastify" {
  interface FastifyInstance {
    /** The embedded broker's MQTT port (BROKER_MODE=embedded only). */
    mqttPort?: number;
    /** The embedded broker (BROKER_MODE=embedded only). */
    embeddedBroker?: EmbeddedBroker;
  }
}

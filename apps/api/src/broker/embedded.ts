// The package ships no types; a reference (not an import) so that every program compiling this
// file (the CLI type-checks the router through it) sees the declaration.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./modules.d.ts" />
// The embedded team broker: aedes in the platform's process, MQTT 3.1.1 over TCP and over WebSocket
// on the API's own HTTP server. Every decision is BrokerAccess's (and so @flowplane/auth's); what
// lives here is the plumbing that makes aedes behave as EMQX does with FlowFuse's configuration:
//
// - each team's topics live under its mount (`ff/v1/<teamId>/c/`): topics are mounted on the way
//   in (publish, subscribe, unsubscribe, will) and unmounted on the way out, so clients see bare
//   topics and no filter of one team can match another team's messages, retained ones included;
// - a refused subscription is granted 128; a refused publish is dropped (sent to a sink topic no
//   filter can match) and the client stays connected, as EMQX's `deny_action = ignore`.
import { Aedes, type AedesPublishPacket, type Client } from "aedes";
import persistenceLevel from "aedes-persistence-level";
import { Level } from "level";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import type { IncomingMessage, Server as HttpServer } from "node:http";
import { type AddressInfo, createServer, type Server } from "node:net";
import { dirname } from "node:path";
import type { Duplex } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import { createWebSocketStream, WebSocketServer } from "ws";
import type { DeviceBrokerIdentity } from "@flowplane/auth";
import { clientAddressOf, type TrustProxy } from "../env";
import type { BrokerAccess, BrokerSession } from "./access";
import type { PlatformTransport } from "./transport";

/** Where a refused publish goes: mounted filters all start `ff/`, so nothing receives it. */
const SINK = "$flowplane/dropped";

/** The WebSocket path on the API's HTTP server. */
export const MQTT_WEBSOCKET_PATH = "/mqtt";

export interface EmbeddedBrokerOptions {
  access: BrokerAccess;
  /** Retained messages and persistent sessions are kept here (LevelDB); none: in memory. */
  dataDir?: string;
  host: string;
  /** 0: any free port. */
  port: number;
  /** The default port only (an explicit one that is taken is an error): when it is taken, take a
   *  free one instead. */
  fallBackWhenTaken?: boolean;
  /** With `fallBackWhenTaken`: the file the port taken is kept in. It is the one taken at every
   *  later start, so team clients configured with it keep working; kept and taken is refused. */
  keepPortIn?: string;
  log: FastifyBaseLogger;
}

export interface EmbeddedBroker extends PlatformTransport {
  /** The TCP port MQTT clients connect to. */
  readonly port: number;
  readonly host: string;
  /** MQTT clients connected now (metrics). */
  readonly clients: number;
  /**
   * Serve MQTT over WebSocket at MQTT_WEBSOCKET_PATH on this HTTP server; a client's address (its
   * failed CONNECTs' count) is the forwarded one behind TRUST_PROXY's proxies, as request.ip.
   */
  attachWebSocket(server: HttpServer, trustProxy?: TrustProxy): void;
  /** End the live session of a client (deleted, or its password changed). */
  disconnect(teamId: string, username: string): void;
  /** Stops taking connections and ends every session (the broker "goes away"); `resume` undoes it
   *  on the same port. */
  suspend(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

/** What the packet parser emits, as far as the UNSUBSCRIBE fix reads it. */
interface ParsedPacket {
  cmd: string;
  unsubscriptions?: string[];
}

/** The session an authenticated client carries (set in `authenticate`). */
const sessions = new WeakMap<Client, BrokerSession>();

const unmount = (session: BrokerSession, topic: string): string | undefined =>
  topic.startsWith(session.mount) ? topic.slice(session.mount.length) : undefined;

/** Subscriptions restored from a persistent session come back mounted: take them as they are. */
const bare = (session: BrokerSession, topic: string): string => unmount(session, topic) ?? topic;

export async function startEmbeddedBroker(options: EmbeddedBrokerOptions): Promise<EmbeddedBroker> {
  const { access, log } = options;
  /** TRUST_PROXY, for the clients that come over WebSocket (attachWebSocket). */
  let websocketTrust: TrustProxy | undefined;
  const level = options.dataDir ? new Level(options.dataDir) : undefined;
  const broker = new Aedes({
    persistence: level ? persistenceLevel(level) : undefined,
    // Explicit, as the aedes security advisories advise.
    connectTimeout: 30_000,
    keepaliveLimit: 3600,
    drainTimeout: 60_000,

    authenticate(client, username, password, done) {
      const address =
        (client.conn as { remoteAddress?: string }).remoteAddress ??
        (client.req && clientAddressOf(client.req, websocketTrust));
      access
        .authenticate(username, client.id, password?.toString("utf8"), address)
        .then((session) => {
          if (!session) {
            done(Object.assign(new Error("Not authorized"), { returnCode: 5 as const }), false);
            return;
          }
          sessions.set(client, session);
          done(null, true);
        })
        .catch((error: unknown) => {
          log.error({ err: error }, "broker authentication failed");
          done(Object.assign(new Error("Server unavailable"), { returnCode: 3 as const }), false);
        });
    },

    authorizePublish(client, packet, done) {
      // The platform's own publishes (none yet) and aedes' $SYS heartbeat carry no client.
      if (!client) return done(null);
      const session = sessions.get(client);
      if (!session) return done(new Error("not authenticated"));
      const drop = () => {
        packet.topic = SINK;
        packet.retain = false;
        done(null);
      };
      const decide = (allowed: boolean) => {
        if (!allowed) return drop();
        packet.topic = session.mount + packet.topic;
        // A device's messages are its present: none is kept for later subscribers.
        if (session.device) packet.retain = false;
        done(null);
      };
      const decision = access.authorize(session, "publish", packet.topic);
      if (typeof decision === "boolean") return decide(decision);
      decision.then(decide, (error: unknown) => {
        log.error({ err: error }, "broker authorization failed");
        drop();
      });
    },

    authorizeSubscribe(client, subscription, done) {
      const session = sessions.get(client);
      if (!session) return done(new Error("not authenticated"));
      const topic = bare(session, subscription.topic);
      const decide = (allowed: boolean) => {
        if (!allowed) return done(null, null);
        // In place: aedes looks up retained messages with the SUBSCRIBE packet's own objects.
        subscription.topic = session.mount + topic;
        done(null, subscription);
      };
      const decision = access.authorize(session, "subscribe", topic);
      if (typeof decision === "boolean") return decide(decision);
      decision.then(decide, (error: unknown) => {
        log.error({ err: error }, "broker authorization failed");
        done(null, null);
      });
    },

    authorizeForward(client, packet: AedesPublishPacket) {
      const session = sessions.get(client);
      if (!session) return null;
      const topic = unmount(session, packet.topic);
      if (topic === undefined) return null;
      // In place: the offline-queue path on reconnect writes the original packet and only reads
      // the return value as yes or no (a copy would leak the mount).
      packet.topic = topic;
      return packet;
    },
  });
  await broker.listen();

  // UNSUBSCRIBE has no hook, and aedes keys subscriptions by the mounted filter: mount the
  // filters as the packet is parsed, before aedes handles it.
  const handle = (stream: Duplex, request?: IncomingMessage) => {
    const client = broker.handle(stream, request) as Client & {
      _parser: { prependListener(event: "packet", listener: (packet: ParsedPacket) => void): void };
    };
    client._parser.prependListener("packet", (packet: ParsedPacket) => {
      if (packet.cmd !== "unsubscribe" || !packet.unsubscriptions) return;
      const session = sessions.get(client);
      packet.unsubscriptions = packet.unsubscriptions.map((topic) =>
        session ? session.mount + topic : SINK,
      );
    });
    return client;
  };

  const clientsById = (broker as unknown as { clients: Record<string, Client> }).clients;
  access.onChange((change) => {
    if (!change.disconnect) return;
    clientsById[change.clientId ?? `${change.username}@${change.teamId}`]?.close();
  });

  // Devices' sessions, by client id: the client that holds it now (a second CONNECT with the same
  // id takes the session over, and the old client's end must not read as the device's).
  const deviceClients = new Map<string, Client>();
  const sessionListeners: ((device: DeviceBrokerIdentity, connected: boolean) => void)[] = [];
  broker.on("clientReady", (client) => {
    const device = sessions.get(client)?.device;
    if (!device) return;
    deviceClients.set(client.id, client);
    for (const listener of sessionListeners) listener(device, true);
  });
  broker.on("clientDisconnect", (client) => {
    const device = sessions.get(client)?.device;
    if (!device || deviceClients.get(client.id) !== client) return;
    deviceClients.delete(client.id);
    for (const listener of sessionListeners) listener(device, false);
  });

  const sockets = new Set<Duplex>();
  let suspended = false;
  const tcp = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    handle(socket);
  });
  const port = await choosePort(tcp, options);
  log.info({ host: options.host, port }, "embedded MQTT broker listening");

  const websockets = new WebSocketServer({ noServer: true });
  type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
  const upgradeHandlers: [HttpServer, UpgradeHandler][] = [];

  return {
    port,
    host: options.host,
    get clients() {
      return broker.connectedClients;
    },
    attachWebSocket(server, trustProxy) {
      websocketTrust = trustProxy;
      const onUpgrade: UpgradeHandler = (request, socket, head) => {
        const path = (request.url ?? "").split("?")[0];
        if (path !== MQTT_WEBSOCKET_PATH || suspended) {
          socket.destroy();
          return;
        }
        websockets.handleUpgrade(request, socket, head, (ws) => {
          handle(createWebSocketStream(ws), request);
        });
      };
      server.on("upgrade", onUpgrade);
      upgradeHandlers.push([server, onUpgrade]);
    },
    disconnect(teamId, username) {
      clientsById[`${username}@${teamId}`]?.close();
    },
    publish: (topic, payload) =>
      new Promise<void>((resolve, reject) => {
        broker.publish(
          {
            cmd: "publish",
            topic,
            payload: Buffer.from(payload),
            qos: 0,
            retain: false,
            dup: false,
          },
          (error) => (error ? reject(error) : resolve()),
        );
      }),
    subscribe: (filter, handler) =>
      new Promise<void>((resolve) => {
        broker.subscribe(
          filter,
          (packet, done) => {
            handler(
              packet.topic,
              Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload),
            );
            done();
          },
          () => resolve(),
        );
      }),
    onDeviceSession(listener) {
      sessionListeners.push(listener);
    },
    async suspend() {
      suspended = true;
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const client of Object.values(clientsById)) client.close();
      for (const socket of sockets) socket.destroy();
      for (const ws of websockets.clients) ws.terminate();
      await closed;
    },
    async resume() {
      await listenOn(tcp, options.host, port, false);
      suspended = false;
    },
    async close() {
      for (const [server, handler] of upgradeHandlers) server.off("upgrade", handler);
      for (const ws of websockets.clients) ws.terminate();
      await new Promise<void>((resolve) => websockets.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
      await level?.close();
    },
  };
}

/** Listens on the port asked for; for the default port, on the one kept since the first start. */
async function choosePort(server: Server, options: EmbeddedBrokerOptions): Promise<number> {
  const { host, log } = options;
  if (!options.fallBackWhenTaken) return listenOn(server, host, options.port, false);
  const file = options.keepPortIn;
  const kept = file ? await readKeptPort(file) : undefined;
  if (kept !== undefined) {
    try {
      return await listenOn(server, host, kept, false);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
      throw new Error(
        `the team broker's MQTT port ${kept} on ${host} is taken. The broker has used it since its ` +
          `first start (kept in ${file}) and team clients connect to it: free the port, or set ` +
          `MQTT_PORT to the port they should use from now on`,
        { cause: error },
      );
    }
  }
  const port = await listenOn(server, host, options.port, true);
  if (port !== options.port) {
    log.warn(
      { wanted: options.port, port, keptIn: file },
      "the MQTT port was taken; the broker took a free one and keeps it (MQTT_PORT chooses)",
    );
  }
  if (file) {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, `${port}\n`, { mode: 0o600 });
  }
  return port;
}

async function readKeptPort(file: string): Promise<number | undefined> {
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (text === undefined) return undefined;
  const port = Number(text.trim());
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`${file} holds no port (${JSON.stringify(text.trim())}): delete it or fix it`);
  }
  return port;
}

async function listenOn(
  server: Server,
  host: string,
  port: number,
  fallBack: boolean,
): Promise<number> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    if (!fallBack || (error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    return listenOn(server, host, 0, false);
  }
  return (server.address() as AddressInfo).port;
}

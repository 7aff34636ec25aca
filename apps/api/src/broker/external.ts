// The platform's side of an external broker (EMQX) for the devices' channel: an MQTT client of
// its own (identity: platform-identity.ts) that publishes commands and subscribes to the devices'
// messages. A device's session beginning and ending comes from EMQX's client events
// (`$SYS/brokers/<node>/clients/<clientid>/connected|disconnected`, on by default); a device's
// status message also marks it connected (the channel records it), so a platform that connects
// after its devices learns of them at their next status. The platform starts without waiting for
// the broker: its client keeps trying, and subscribes at every connect.
import { parseDeviceUsername, type DeviceBrokerIdentity, topicMatches } from "@flowplane/auth";
import type { FastifyBaseLogger } from "fastify";
import mqtt from "mqtt";
import { platformCredentials } from "./platform-identity";
import type { PlatformTransport } from "./transport";

/** The reasons EMQX gives for a session that a newer connection of the same client replaced. */
const REPLACED = new Set(["takenover", "discarded"]);

const reasonOf = (payload: Buffer): string => {
  try {
    const event = JSON.parse(payload.toString("utf8")) as { reason?: unknown };
    return typeof event.reason === "string" ? event.reason : "";
  } catch {
    return "";
  }
};

export interface ExternalTransport extends PlatformTransport {
  close(): Promise<void>;
}

export async function connectExternalBroker(options: {
  url: string;
  tokenSecret: string;
  log: FastifyBaseLogger;
}): Promise<ExternalTransport> {
  const { username, password } = platformCredentials(options.tokenSecret);
  const client = mqtt.connect(options.url, {
    username,
    clientId: username,
    password,
    protocolVersion: 4,
    clean: true,
    // Subscriptions are made again on every connect below, not by the client's own bookkeeping
    // (which forgets those asked for while it was offline).
    resubscribe: false,
    reconnectPeriod: 5_000,
    connectTimeout: 10_000,
  });
  const handlers: [string, (topic: string, payload: Buffer) => void][] = [];
  const sessionListeners: ((device: DeviceBrokerIdentity, connected: boolean) => void)[] = [];
  const subscribeAll = (filters: string[]) =>
    filters.length === 0
      ? Promise.resolve()
      : client.subscribeAsync(filters, { qos: 1 }).then((granted) => {
          const refused = granted.filter((grant) => grant.qos === 128).map((g) => g.topic);
          if (refused.length > 0) {
            options.log.error(
              { refused },
              "the external broker refused the platform's subscriptions",
            );
          }
        });

  client.on("connect", () => {
    options.log.info({ url: options.url }, "connected to the external MQTT broker");
    subscribeAll(handlers.map(([filter]) => filter)).catch((error: unknown) =>
      options.log.error({ err: error }, "subscribing to the external broker failed"),
    );
  });
  client.on("error", (error) =>
    options.log.warn({ err: error }, "the external MQTT broker connection failed"),
  );
  client.on("message", (topic, payload, packet) => {
    // A retained message is a device's past, replayed at every subscription: never its present.
    if (packet.retain) return;
    for (const [filter, handler] of handlers) {
      if (topicMatches(filter, topic)) handler(topic, payload);
    }
  });

  const transport: ExternalTransport = {
    publish: async (topic, payload) => {
      await client.publishAsync(topic, payload, { qos: 0 });
    },
    async subscribe(filter, handler) {
      handlers.push([filter, handler]);
      if (client.connected) await subscribeAll([filter]);
    },
    onDeviceSession(listener) {
      sessionListeners.push(listener);
    },
    close: () => client.endAsync(true),
  };

  // EMQX names the client in the topic and in the event (`clientid`): a device's is its username.
  // A session taken over by a new connection of the same client (the agent reconnecting) ends
  // with the reason `takenover` (or `discarded`), possibly after the new one began: not the
  // device's end.
  const sessionEvent = (connected: boolean) => (topic: string, payload: Buffer) => {
    const device = parseDeviceUsername(topic.split("/")[4] ?? "");
    if (!device) return;
    if (!connected && REPLACED.has(reasonOf(payload))) return;
    for (const listener of sessionListeners) listener(device, connected);
  };
  await transport.subscribe("$SYS/brokers/+/clients/+/connected", sessionEvent(true));
  await transport.subscribe("$SYS/brokers/+/clients/+/disconnected", sessionEvent(false));

  return transport;
}

// A real MQTT client (MQTT.js) for the broker tests, as a team's device would use it: connect with
// `<username>@<teamId>` as username and client id, read SUBACKs and collect messages.
import mqtt, { type IClientOptions, type MqttClient } from "mqtt";

/** Every client the tests opened, closed by `closeAll` whatever the test did. */
const opened: MqttClient[] = [];
const sessionsPresent = new WeakMap<MqttClient, boolean>();

/** The CONNACK's session-present flag: the broker still had the client's session. */
export const sessionPresent = (client: MqttClient) => sessionsPresent.get(client);

export interface ConnectOptions extends IClientOptions {
  url: string;
  password: string;
}

/** Connects; resolves when the CONNACK accepts, rejects with the refusal (its `code`). */
export function connectMqtt(username: string, options: ConnectOptions): Promise<MqttClient> {
  const { url, ...rest } = options;
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, {
      username,
      clientId: username,
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 5_000,
      ...rest,
    });
    opened.push(client);
    inbox(client);
    client.once("connect", (connack) => {
      sessionsPresent.set(client, connack.sessionPresent);
      resolve(client);
    });
    client.once("error", (error) => {
      client.end(true);
      reject(error);
    });
  });
}

/** The CONNACK return code of a refused CONNECT; undefined when it was accepted. */
export async function refusalOf(username: string, options: ConnectOptions) {
  return connectMqtt(username, options).then(
    async (client) => {
      await client.endAsync();
      return undefined;
    },
    (error: { code?: number }) => error.code,
  );
}

/** The SUBACK's granted list, whether MQTT.js resolves or rejects (it rejects on any 128). */
export async function granted(client: MqttClient, filters: string[], qos: 0 | 1 = 1) {
  try {
    return (await client.subscribeAsync(filters, { qos })).map((g) => g.qos);
  } catch (error) {
    return ((error as { packet?: { granted?: number[] } }).packet?.granted ?? []).map(Number);
  }
}

type Inbox = ReturnType<typeof collect>;
const inboxes = new WeakMap<MqttClient, Inbox>();

function collect(client: MqttClient) {
  const messages: { topic: string; payload: string; retain: boolean }[] = [];
  client.on("message", (topic, payload, packet) =>
    messages.push({ topic, payload: payload.toString(), retain: packet.retain }),
  );
  return {
    messages,
    until: (topic: string) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no message on ${topic}`)), 5_000);
        const check = () => {
          if (messages.some((m) => m.topic === topic)) {
            clearTimeout(timer);
            client.off("message", check);
            resolve();
          }
        };
        client.on("message", check);
        check();
      }),
  };
}

/**
 * Every message the client received since it was created, in order (collected from the start,
 * so a queued message delivered right after CONNACK is not missed), and a wait for a topic.
 */
export function inbox(client: MqttClient): Inbox {
  let found = inboxes.get(client);
  if (!found) inboxes.set(client, (found = collect(client)));
  return found;
}

export async function closeAll() {
  await Promise.all(opened.splice(0).map((client) => client.endAsync(true).catch(() => {})));
}

// An aedes broker that behaves, for the platform, as EMQX configured as docs/broker.md says: every
// CONNECT is asked of the platform's HTTP authentication callback and every publish and
// subscription of its ACL callback (with the broker token, as EMQX's HTTP sources send it); a
// client is mounted at the `client_attrs.team` the callback answers; and client sessions are
// announced on `$SYS/brokers/<node>/clients/<clientid>/connected|disconnected`, as EMQX's event
// messages. It lets the external-broker path be tested without EMQX.
import { Aedes, type AedesPublishPacket, type Client } from "aedes";
import { createServer, type AddressInfo, type Server } from "node:net";

const NODE = "emqx@127.0.0.1";

export interface EmqxLikeBroker {
  url: string;
  /** Where the callbacks are and the broker token to send: CONNECTs wait until this is given. */
  useCallbacks(baseUrl: string, token: string): void;
  close(): Promise<void>;
}

export async function startEmqxLikeBroker(): Promise<EmqxLikeBroker> {
  let callbacks: { baseUrl: string; token: string } | undefined;
  let configured: () => void = () => {};
  const ready = new Promise<void>((resolve) => (configured = resolve));
  const mounts = new Map<Client, string>();

  const ask = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    await ready;
    const response = await fetch(`${callbacks!.baseUrl}/api/comms/v2/${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${callbacks!.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return response.status === 200 ? ((await response.json()) as Record<string, unknown>) : {};
  };
  const allowed = async (client: Client, action: string, topic: string) =>
    (await ask("acls", { username: usernames.get(client), topic, action })).result === "allow";
  const usernames = new Map<Client, string | undefined>();

  const broker = new Aedes({
    authenticate(client, username, password, done) {
      ask("auth", { clientId: client.id, username, password: password?.toString() }).then(
        (answer) => {
          if (answer.result !== "allow") {
            done(Object.assign(new Error("denied"), { returnCode: 5 as const }), false);
            return;
          }
          usernames.set(client, username);
          const attrs = answer.client_attrs as { team?: string } | undefined;
          mounts.set(client, attrs?.team ?? "");
          done(null, true);
        },
        (error: Error) => done(Object.assign(error, { returnCode: 3 as const }), false),
      );
    },
    authorizePublish(client, packet, done) {
      // The broker's own messages (the session events below) carry no client.
      if (!client) return done(null);
      allowed(client, "publish", packet.topic).then(
        (yes) => {
          if (!yes) return done(new Error("denied"));
          packet.topic = `${mounts.get(client) ?? ""}${packet.topic}`;
          done(null);
        },
        (error: Error) => done(error),
      );
    },
    authorizeSubscribe(client, subscription, done) {
      allowed(client, "subscribe", subscription.topic).then(
        (yes) =>
          done(
            null,
            yes
              ? { ...subscription, topic: `${mounts.get(client) ?? ""}${subscription.topic}` }
              : null,
          ),
        (error: Error) => done(error, null),
      );
    },
    authorizeForward(client, packet) {
      // Unmounted on the way out, as EMQX does: a client sees its topics bare.
      const mount = mounts.get(client) ?? "";
      if (!mount || !packet.topic.startsWith(mount)) return packet;
      return { ...packet, topic: packet.topic.slice(mount.length) } as AedesPublishPacket;
    },
  });

  // The client holding each id now: an older one's end is a takeover (EMQX's reason `takenover`).
  const holders = new Map<string, Client>();
  const announce = (client: Client, event: "connected" | "disconnected", reason?: string) => {
    const payload = JSON.stringify({
      clientid: client.id,
      username: usernames.get(client),
      ...(reason && { reason }),
    });
    broker.publish(
      {
        cmd: "publish",
        topic: `$SYS/brokers/${NODE}/clients/${client.id}/${event}`,
        payload: Buffer.from(payload),
        qos: 0,
        retain: false,
        dup: false,
      },
      () => {},
    );
  };
  broker.on("clientReady", (client) => {
    holders.set(client.id, client);
    announce(client, "connected");
  });
  broker.on("clientDisconnect", (client) => {
    const replaced = holders.get(client.id) !== client;
    if (!replaced) holders.delete(client.id);
    announce(client, "disconnected", replaced ? "takenover" : "normal");
    mounts.delete(client);
    usernames.delete(client);
  });

  await broker.listen();
  const server: Server = createServer(broker.handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    useCallbacks(baseUrl, token) {
      callbacks = { baseUrl, token };
      configured();
    },
    async close() {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// The live channel between the platform and its devices' agents, over the team broker (FlowFuse's
// `forge/comms/devices.js`, on the same topics): a device publishes its state on
// `ff/v1/<team>/d/<device>/status` (recorded as an HTTP check-in is, and answered with an `update`
// when it runs something else), its log on `…/logs` while someone watches, and its replies to
// commands on the reply topic each names; the platform publishes commands on `…/command`. A change
// to what connected devices should run reaches them at once (`reconcile`, after every change the
// procedures make), not at their next heartbeat. A device's session ending (its connection closed,
// or silent past its keepalive) shows it offline.
import { deviceTopic } from "@flowplane/auth";
import {
  type ChannelTarget,
  type Db,
  listDeviceTargets,
  recordDeviceStatus,
  resetDeviceConnections,
  setDeviceConnected,
} from "@flowplane/db";
import type { FastifyBaseLogger } from "fastify";
import { randomUUID } from "node:crypto";
import type { PlatformTransport } from "../broker/index";
import { ApiError } from "../core/errors";
import { CheckInBody } from "./live-schemas";
import { DeviceLogs, type LogEntry } from "./log-buffer";
import { mismatchOf, snapshotOf } from "./mismatch";

/** The largest message of a device's the channel reads (a status, a log batch, a reply). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** How long a command waits for the device's reply (FlowFuse's default). */
export const COMMAND_TIMEOUT_MS = 10_000;

/** The `update` command's content (FlowFuse's `sendDeviceUpdateCommand`). */
export function updateOf(target: ChannelTarget): Record<string, unknown> {
  const owner = {
    project: target.project_id,
    application: target.application_id,
  };
  const ownerType = target.project_id ? "project" : target.application_id ? "application" : "none";
  return {
    ownerType,
    // The other owner's key is left out (the agent 4.2 reads a key as a change of owner): an
    // instance's device gets `project`, an application's `application`, an unassigned one both.
    ...(ownerType !== "application" && { project: owner.project }),
    ...(ownerType !== "project" && { application: owner.application }),
    snapshot: target.target,
    settings: target.settings_hash,
    mode: target.mode === "developer" ? "developer" : "autonomous",
    licensed: false,
  };
}

interface Pending {
  deviceId: string;
  command: string;
  resolve: (payload: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class DeviceChannel {
  /** Devices holding a session now: id → team. */
  private readonly connected = new Map<string, string>();
  /** What each connected device was last told to run, or confirmed it runs (the update's JSON). */
  private readonly told = new Map<string, string>();
  private readonly pending = new Map<string, Pending>();
  /**
   * Each device's session writes, in the order its events came: a quick disconnect and reconnect
   * (or a takeover an external broker reports as an end) must not leave the earlier write last.
   */
  private readonly sessionWrites = new Map<string, Promise<void>>();
  private readonly platformId = randomUUID();
  private reconciling: Promise<void> | undefined;
  private reconcileAgain = false;
  readonly logs: DeviceLogs;

  constructor(
    private readonly db: Db,
    private readonly transport: PlatformTransport,
    private readonly log: FastifyBaseLogger,
  ) {
    this.logs = new DeviceLogs((teamId, deviceId, on) =>
      this.send(teamId, deviceId, on ? "startLog" : "stopLog"),
    );
  }

  /** Devices holding a session now (metrics). */
  get sessions(): number {
    return this.connected.size;
  }

  async start(): Promise<void> {
    // Nobody holds a session with a broker that has just started.
    await resetDeviceConnections(this.db);
    this.transport.onDeviceSession((device, connected) => {
      if (connected) {
        this.connected.set(device.deviceId, device.teamId);
        this.logs.reconnected(device.deviceId).catch(() => {});
      } else {
        this.connected.delete(device.deviceId);
        this.told.delete(device.deviceId);
        this.logs.ended(device.deviceId);
      }
      this.recordSession(device.deviceId, connected);
    });
    const each = (
      leaf: string,
      handler: (teamId: string, deviceId: string, body: Buffer) => void,
    ) =>
      this.transport.subscribe(`ff/v1/+/d/+/${leaf}`, (topic, body) => {
        const [, , teamId, , deviceId] = topic.split("/");
        // A device's message is the tenant's: one too large is dropped unread, and whatever a
        // handler makes of one never throws into the broker (it would take the platform down).
        if (!teamId || !deviceId || body.length > MAX_MESSAGE_BYTES) return;
        try {
          handler(teamId, deviceId, body);
        } catch (error) {
          this.log.warn({ err: error, deviceId }, `a device's ${leaf} message not handled`);
        }
      });
    await each("status", (teamId, deviceId, body) => {
      this.status(teamId, deviceId, body).catch((error: unknown) =>
        this.log.error({ err: error, deviceId }, "device status not handled"),
      );
    });
    await each("logs", (_teamId, deviceId, body) => {
      const parsed = parseJson(body);
      const entries = (Array.isArray(parsed) ? parsed : [parsed]).filter(isLogEntry);
      this.logs.arrived(deviceId, entries);
    });
    const reply = (_teamId: string, deviceId: string, body: Buffer) => this.reply(deviceId, body);
    await each("response", reply);
    await each("response/+", reply);
  }

  /** Whether the device holds a session with the broker now. */
  isConnected(deviceId: string): boolean {
    return this.connected.has(deviceId);
  }

  /** The ids of the devices connected now. */
  connectedDevices(): string[] {
    return [...this.connected.keys()];
  }

  /** A command on the device's command topic (FlowFuse's `{ command, ...payload }`). */
  async send(
    teamId: string,
    deviceId: string,
    command: string,
    payload: Record<string, unknown> = {},
  ): Promise<void> {
    const topic = deviceTopic({ teamId, deviceId }, "command");
    await this.transport.publish(topic, JSON.stringify({ command, ...payload }));
  }

  /**
   * A command and the device's reply (its `payload`): a device not connected is refused at once
   * (400 `device_offline`), one that does not answer within `timeoutMs` gets FlowFuse's 400
   * `no_response`.
   */
  async request(
    teamId: string,
    deviceId: string,
    command: string,
    payload: unknown,
    timeoutMs = COMMAND_TIMEOUT_MS,
  ): Promise<unknown> {
    if (!this.isConnected(deviceId)) throw deviceOffline();
    const correlationData = randomUUID();
    const now = Date.now();
    const reply = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(correlationData);
        reject(noResponse(command, timeoutMs));
      }, timeoutMs);
      this.pending.set(correlationData, { deviceId, command, resolve, reject, timer });
    });
    const sent = this.send(teamId, deviceId, command, {
      deviceId,
      teamId,
      correlationData,
      createdAt: now,
      expiresAt: now + timeoutMs,
      responseTopic: deviceTopic({ teamId, deviceId }, `response/${this.platformId}`),
      payload,
    });
    try {
      await sent;
    } catch (error) {
      // Not sent: nothing will answer, and nothing waits.
      const pending = this.pending.get(correlationData);
      if (pending) clearTimeout(pending.timer);
      this.pending.delete(correlationData);
      reply.catch(() => {});
      throw error;
    }
    return reply;
  }

  /** Records a device's session state after the writes of its earlier events. */
  private recordSession(deviceId: string, connected: boolean) {
    const write = (this.sessionWrites.get(deviceId) ?? Promise.resolve())
      .then(() => setDeviceConnected(this.db, deviceId, connected))
      .catch((error: unknown) =>
        this.log.error({ err: error, deviceId }, "device session not recorded"),
      )
      .finally(() => {
        if (this.sessionWrites.get(deviceId) === write) this.sessionWrites.delete(deviceId);
      });
    this.sessionWrites.set(deviceId, write);
  }

  /**
   * What the connected devices should run, compared with what each was last told: those whose
   * target changed get an `update` now. Calls that arrive while one runs share the next.
   */
  reconcile(): Promise<void> {
    if (this.connected.size === 0) return Promise.resolve();
    if (this.reconciling) {
      this.reconcileAgain = true;
      return this.reconciling;
    }
    this.reconciling = (async () => {
      try {
        do {
          this.reconcileAgain = false;
          const targets = await listDeviceTargets(this.db, [...this.connected.keys()]);
          // All at once, not one after another: a group's change reaches its last member as soon
          // as its first (each publish waits for the broker, while the members' statuses come in).
          const sends: Promise<void>[] = [];
          for (const target of targets) {
            const update = updateOf(target);
            const key = JSON.stringify(update);
            if (this.told.get(target.id) === key) continue;
            this.told.set(target.id, key);
            sends.push(this.send(target.team_id, target.id, "update", update));
          }
          await Promise.all(sends);
        } while (this.reconcileAgain);
      } finally {
        this.reconciling = undefined;
      }
    })();
    return this.reconciling;
  }

  /** Ends what waits on the channel (the server is closing). */
  close(): void {
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(new ApiError(503, "server_shutting_down", "The platform is shutting down"));
      this.pending.delete(id);
    }
    this.logs.close();
  }

  private async status(teamId: string, deviceId: string, body: Buffer): Promise<void> {
    const json = parseJson(body);
    const parsed = CheckInBody.safeParse(json);
    // Not JSON at all is not the agent's "busy updating" (a JSON null): ignored, as a bad one.
    if (json === undefined || !parsed.success) {
      this.log.warn({ deviceId }, "a device's status is not a check-in: ignored");
      return;
    }
    this.connected.set(deviceId, teamId);
    const report = parsed.data ?? null;
    const target = await recordDeviceStatus(
      this.db,
      deviceId,
      report && {
        state: report.state ?? null,
        agentVersion: report.agentVersion ?? null,
        nodeRedVersion: report.nodeRedVersion ?? null,
        nodejsVersion: report.nodejsVersion ?? null,
        snapshot: snapshotOf(report.snapshot),
        settings: report.settings ?? null,
      },
    );
    // Gone (its session is being ended), or busy updating: nothing to say to it.
    if (!target || target.team_id !== teamId || report === null) return;
    const update = updateOf(target);
    const key = JSON.stringify(update);
    const unknown = report.state === "unknown";
    if (!unknown && mismatchOf(report, target) === undefined) {
      this.told.set(deviceId, key);
      return;
    }
    this.told.set(deviceId, key);
    await this.send(teamId, deviceId, "update", update);
  }

  private reply(deviceId: string, body: Buffer): void {
    const message = parseJson(body) as {
      correlationData?: unknown;
      deviceId?: unknown;
      payload?: unknown;
    } | null;
    if (!message || typeof message.correlationData !== "string") return;
    const pending = this.pending.get(message.correlationData);
    // Only the device asked answers (the topic is its own: the broker lets no one else publish).
    if (!pending || pending.deviceId !== deviceId) return;
    this.pending.delete(message.correlationData);
    clearTimeout(pending.timer);
    pending.resolve(message.payload);
  }
}

const parseJson = (body: Buffer): unknown => {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
};

const isLogEntry = (value: unknown): value is LogEntry =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export const deviceOffline = () =>
  new ApiError(
    400,
    "device_offline",
    "The device is not connected to the platform: it cannot act until it is back online",
  );

const noResponse = (command: string, timeoutMs: number) =>
  new ApiError(
    400,
    "no_response",
    `The device did not answer the ${command} command within ${timeoutMs / 1000} s`,
  );

declare module "../core/trpc" {
  interface Context {
    /** The devices' live channel (none: the platform has no broker, devices poll over HTTP). */
    deviceChannel?: DeviceChannel;
  }
}

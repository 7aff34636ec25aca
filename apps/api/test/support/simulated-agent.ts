// A device agent reduced to its MQTT protocol (the real agent's lib/mqtt.js, 4.2.1): it connects
// with the broker credentials the platform gave its device, subscribes to its command topic,
// publishes its state on its status topic, and answers the commands it is sent as the real one
// does (`action`, `upload`, `startLog` …). The tests of the channel and the bench use it where a
// thousand real agents (each a Node-RED) would not fit.
import mqtt, { type MqttClient } from "mqtt";

export interface AgentCredentials {
  url: string;
  username: string;
  password: string;
}

export interface AgentState {
  state: string;
  project: string | null;
  application: string | null;
  snapshot: string | null;
  settings: string | null;
  mode?: string;
  agentVersion: string;
  nodeRedVersion?: string;
}

export interface Command {
  command: string;
  correlationData?: string;
  responseTopic?: string;
  payload?: unknown;
  [key: string]: unknown;
}

export class SimulatedAgent {
  readonly client: MqttClient;
  readonly teamId: string;
  readonly deviceId: string;
  readonly commands: Command[] = [];
  private readonly waiters: { test: (c: Command) => boolean; resolve: (c: Command) => void }[] = [];
  /** What it answers an `action` (its `success`); an `upload` (the data); none: no answer. */
  answers: {
    action?: boolean;
    upload?: unknown;
    silent?: boolean;
    /** What it answers `startEditor` (e.g. once a test's tunnel is open); none: `{connected: true}`. */
    startEditor?: (command: Command) => Promise<unknown>;
  } = { action: true };
  state: AgentState = {
    state: "stopped",
    project: null,
    application: null,
    snapshot: null,
    settings: null,
    agentVersion: "4.2.1",
  };
  logEnabled = false;

  private constructor(client: MqttClient, username: string) {
    this.client = client;
    const [, teamId, deviceId] = username.split(":");
    this.teamId = teamId!;
    this.deviceId = deviceId!;
    client.on("message", (_topic, body) => this.onCommand(JSON.parse(body.toString()) as Command));
  }

  /** Connects and subscribes; resolves once the subscription is granted (or refused). */
  static async connect(
    credentials: AgentCredentials,
    options: { keepalive?: number; reconnectPeriod?: number } = {},
  ): Promise<SimulatedAgent> {
    const client = mqtt.connect(credentials.url, {
      clientId: credentials.username,
      username: credentials.username,
      password: credentials.password,
      protocolVersion: 4,
      reconnectPeriod: options.reconnectPeriod ?? 0,
      keepalive: options.keepalive ?? 60,
      connectTimeout: 10_000,
    });
    await new Promise<void>((resolve, reject) => {
      client.once("connect", () => resolve());
      client.once("error", reject);
    });
    const agent = new SimulatedAgent(client, credentials.username);
    await client.subscribeAsync(agent.topic("command"));
    return agent;
  }

  topic(leaf: string): string {
    return `ff/v1/${this.teamId}/d/${this.deviceId}/${leaf}`;
  }

  /** Publishes its state (a check-in), with `change` applied first. */
  async publishStatus(change: Partial<AgentState> = {}): Promise<void> {
    this.state = { ...this.state, ...change };
    await this.client.publishAsync(this.topic("status"), JSON.stringify(this.state), { qos: 1 });
  }

  /** The next command that `test` accepts (one already received counts). */
  nextCommand(test: (command: Command) => boolean, timeoutMs = 10_000): Promise<Command> {
    const seen = this.commands.find(test);
    if (seen) {
      this.commands.splice(this.commands.indexOf(seen), 1);
      return Promise.resolve(seen);
    }
    return new Promise((resolve, reject) => {
      const waiter = { test, resolve };
      this.waiters.push(waiter);
      setTimeout(() => {
        const index = this.waiters.indexOf(waiter);
        if (index < 0) return;
        this.waiters.splice(index, 1);
        reject(new Error(`no command matching ${test.toString()} within ${timeoutMs} ms`));
      }, timeoutMs);
    });
  }

  async log(...lines: { level: string; msg: string }[]): Promise<void> {
    if (!this.logEnabled) return;
    for (const line of lines) {
      await this.client.publishAsync(
        this.topic("logs"),
        JSON.stringify({ ts: Date.now(), ...line }),
        { qos: 1 },
      );
    }
  }

  async end(): Promise<void> {
    await this.client.endAsync(true);
  }

  /** Its answer to a command, on the topic the command names. */
  private reply(command: Command, payload: unknown): void {
    void this.client.publishAsync(
      command.responseTopic ?? this.topic("response"),
      JSON.stringify({
        teamId: this.teamId,
        deviceId: this.deviceId,
        command: command.command,
        correlationData: command.correlationData,
        userProperties: {},
        payload,
      }),
    );
  }

  private onCommand(command: Command): void {
    if (command.command === "update") {
      // As the agent does once it has deployed: it runs what it was told.
      this.state = {
        ...this.state,
        ...(command.project !== undefined && { project: command.project as string | null }),
        ...(command.application !== undefined && {
          application: command.application as string | null,
        }),
        snapshot: (command.snapshot as string | null) ?? null,
        settings: (command.settings as string | null) ?? null,
        mode: command.mode as string,
        state: command.snapshot ? "running" : "stopped",
      };
    } else if (command.command === "startLog") {
      if (!this.logEnabled) {
        void this.client.publishAsync(
          this.topic("logs"),
          JSON.stringify([{ ts: Date.now(), level: "info", msg: "buffered line" }]),
        );
      }
      this.logEnabled = true;
    } else if (command.command === "stopLog") {
      this.logEnabled = false;
    } else if (
      command.command === "startEditor" &&
      this.answers.startEditor &&
      !this.answers.silent &&
      command.correlationData
    ) {
      void this.answers.startEditor(command).then((payload) => this.reply(command, payload));
    } else if (!this.answers.silent && command.correlationData) {
      const payload =
        command.command === "action"
          ? this.answers.action
            ? { success: true }
            : { success: false, error: { code: "action_failed", error: "It failed" } }
          : command.command === "upload"
            ? this.answers.upload
            : { connected: true };
      this.reply(command, payload);
    }
    const waiter = this.waiters.find((w) => w.test(command));
    if (waiter) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(command);
    } else this.commands.push(command);
  }
}

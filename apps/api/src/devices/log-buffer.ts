// A device's Node-RED log, live, while someone watches: the first watcher has the platform send
// the agent `startLog` (the agent answers with the lines it holds, then each new one), the last to
// leave `stopLog` once a grace has passed. What arrived is kept, numbered, for a paged read and
// for a watcher that resumes after the last line it saw.

/** A line as the agent sends it: Node-RED's `{ ts, level, msg }`, the agent's own `{ level, msg }`. */
export interface LogEntry {
  ts?: unknown;
  level?: unknown;
  msg?: unknown;
}

/** A line as kept and served: numbered in arrival order, with its time. */
export interface DeviceLogLine {
  id: number;
  ts: number;
  level: string;
  msg: string;
}

/** Lines kept per device (the agent's own buffer holds 1,000). */
export const LOG_LINES_KEPT = 1000;
/** The longest line kept (longer ones are cut): a device cannot fill the platform's memory. */
export const MAX_LINE_LENGTH = 8 * 1024;
/** How long the log keeps streaming after its last watcher left (or after a paged read). */
export const LOG_GRACE_MS = 60_000;

interface DeviceLog {
  teamId: string;
  lines: DeviceLogLine[];
  next: number;
  watchers: Set<(lines: DeviceLogLine[]) => void>;
  /** Told when the device's session ends (a live stream ends with it). */
  enders: Set<() => void>;
  leases: number;
  idle?: NodeJS.Timeout;
}

export class DeviceLogs {
  private readonly logs = new Map<string, DeviceLog>();

  /** `toggle` sends the agent `startLog` (on) or `stopLog` (off). */
  constructor(
    private readonly toggle: (teamId: string, deviceId: string, on: boolean) => Promise<void>,
    private readonly graceMs = LOG_GRACE_MS,
  ) {}

  /**
   * Follows a device's log: `listener` gets each batch of new lines, `ended` (if given) hears the
   * device's session end. Returns the function that stops following.
   */
  async watch(
    teamId: string,
    deviceId: string,
    listener: (lines: DeviceLogLine[]) => void,
    ended?: () => void,
  ): Promise<() => void> {
    const log = await this.open(teamId, deviceId);
    log.watchers.add(listener);
    if (ended) log.enders.add(ended);
    return () => {
      log.watchers.delete(listener);
      if (ended) log.enders.delete(ended);
      this.idleLater(deviceId, log);
    };
  }

  /**
   * The lines kept after `after` (none: from the oldest), at most `limit`; reading keeps the log
   * streaming for the grace, so that a script polling this gets the lines as they come.
   */
  async read(
    teamId: string,
    deviceId: string,
    after: number | undefined,
    limit: number,
  ): Promise<{ lines: DeviceLogLine[]; next: number | null }> {
    const log = await this.open(teamId, deviceId);
    log.leases++;
    setTimeout(() => {
      log.leases--;
      this.idleLater(deviceId, log);
    }, this.graceMs).unref();
    const newer = log.lines.filter((line) => after === undefined || line.id > after);
    const lines = newer.slice(0, limit);
    return { lines, next: newer.length > limit ? lines[lines.length - 1]!.id : null };
  }

  /** Lines the device published. */
  arrived(deviceId: string, entries: LogEntry[]): void {
    const log = this.logs.get(deviceId);
    if (!log || entries.length === 0) return;
    const now = Date.now();
    // What the device sends is bounded here: only the lines that can be kept, each cut to size.
    const lines = entries.slice(-LOG_LINES_KEPT).map((entry) => ({
      id: log.next++,
      ts: typeof entry.ts === "number" && Number.isFinite(entry.ts) ? entry.ts : now,
      level: typeof entry.level === "string" ? entry.level.slice(0, 32) : "",
      msg: (typeof entry.msg === "string" ? entry.msg : JSON.stringify(entry.msg ?? "")).slice(
        0,
        MAX_LINE_LENGTH,
      ),
    }));
    log.lines = log.lines.concat(lines).slice(-LOG_LINES_KEPT);
    for (const watcher of log.watchers) watcher(lines);
  }

  /** The device's session ended: it streams nothing until it is asked again. */
  ended(deviceId: string): void {
    const log = this.logs.get(deviceId);
    if (!log) return;
    clearTimeout(log.idle);
    if (log.watchers.size === 0 && log.leases === 0) this.logs.delete(deviceId);
    else log.lines = [];
    for (const ender of [...log.enders]) ender();
  }

  /** A device that connects again resumes streaming to those still watching. */
  async reconnected(deviceId: string): Promise<void> {
    const log = this.logs.get(deviceId);
    if (log) await this.toggle(log.teamId, deviceId, true);
  }

  close(): void {
    for (const log of this.logs.values()) clearTimeout(log.idle);
    this.logs.clear();
  }

  private async open(teamId: string, deviceId: string): Promise<DeviceLog> {
    let log = this.logs.get(deviceId);
    if (log) {
      clearTimeout(log.idle);
      log.idle = undefined;
      return log;
    }
    log = { teamId, lines: [], next: 1, watchers: new Set(), enders: new Set(), leases: 0 };
    this.logs.set(deviceId, log);
    await this.toggle(teamId, deviceId, true);
    return log;
  }

  private idleLater(deviceId: string, log: DeviceLog): void {
    if (log.watchers.size > 0 || log.leases > 0 || this.logs.get(deviceId) !== log) return;
    clearTimeout(log.idle);
    log.idle = setTimeout(() => {
      if (log.watchers.size > 0 || log.leases > 0) return;
      this.logs.delete(deviceId);
      this.toggle(log.teamId, deviceId, false).catch(() => {});
    }, this.graceMs);
    log.idle.unref();
  }
}

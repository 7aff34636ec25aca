// The events' runner, one per API process: it numbers committed events (sequenceEvents, under a
// lock that makes one process do it at a time) soon after any is written here — every audit entry
// and recordEvent call kicks it — and at each tick for those written by another process. The
// consumers (webhook deliveries, notifications) run in the numbering transaction; the listeners
// (this process's streams) hear that new events are there after it commits.
import {
  type Db,
  type EventConsumer,
  type EventRecord,
  onAuditWritten,
  onEventRecorded,
  sequenceEvents,
} from "@flowplane/db";
import type { FastifyBaseLogger } from "fastify";
import { RoundLog } from "../core/background";

/** A kick waits this long, so that the writer's transaction has committed. */
const KICK_DELAY_MS = 15;

export class EventRunner {
  private readonly consumers: EventConsumer[] = [];
  private readonly listeners = new Set<(events: EventRecord[]) => void>();
  private timer: NodeJS.Timeout | undefined;
  private kicked: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly rounds: RoundLog;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly tickMs: number,
  ) {
    this.rounds = new RoundLog(log, "numbering events failed");
  }

  /** A consumer runs in the numbering transaction: each event reaches it exactly once. */
  addConsumer(consumer: EventConsumer): void {
    this.consumers.push(consumer);
  }

  /** Hears the events this process numbered, after their commit. Returns the unsubscribe. */
  listen(listener: (events: EventRecord[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): void {
    const kick = () => this.kick();
    this.unsubscribe.push(onAuditWritten(kick), onEventRecorded(kick));
    this.timer = setInterval(() => this.run(), this.tickMs);
    this.timer.unref();
    this.run();
  }

  /** Numbers soon: something was written. */
  kick(): void {
    if (this.closed || this.kicked) return;
    this.kicked = setTimeout(() => {
      this.kicked = undefined;
      this.run();
    }, KICK_DELAY_MS);
    this.kicked.unref();
  }

  /** Numbers what waits now; resolves once it is numbered (tests, and a stream that must catch up). */
  async flush(): Promise<void> {
    await this.running;
    await this.runOnce();
  }

  private run(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.runOnce()
      .then(
        () => this.rounds.succeeded(),
        (error: unknown) => {
          if (!this.closed) this.rounds.failed(error);
        },
      )
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.run();
        }
      });
  }

  private async runOnce(): Promise<void> {
    for (;;) {
      const events = await sequenceEvents(this.db, this.consumers, (error) =>
        this.log.error({ err: error }, "an events consumer failed: its work for a batch is lost"),
      );
      if (events.length === 0) return;
      for (const listener of this.listeners) {
        try {
          listener(events);
        } catch (error) {
          this.log.error({ err: error }, "an events listener failed");
        }
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const off of this.unsubscribe) off();
    clearInterval(this.timer);
    clearTimeout(this.kicked);
    await this.running;
  }
}

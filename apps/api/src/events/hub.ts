// What wakes this process's event streams: the runner's numbering here (heard after its commit),
// and events another process numbered, seen by one cheap look at the newest public id every
// `pollMs` while a stream is open (one query per process, however many streams). A woken stream
// reads the database after its own cursor, so order and the absence of duplicates come from there.
import { type Db, latestEventSeq } from "@flowplane/db";
import type { FastifyBaseLogger } from "fastify";
import type { EventRunner } from "./runner";

export class EventHub {
  private readonly wakers = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private seen = 0n;
  private looking = false;
  private readonly unlisten: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    runner: EventRunner | undefined,
    private readonly pollMs: number,
  ) {
    this.unlisten = runner?.listen(() => this.wakeAll());
  }

  /** Calls `wake` whenever new events may be there. Returns the unsubscribe. */
  subscribe(wake: () => void): () => void {
    this.wakers.add(wake);
    if (!this.timer) {
      this.timer = setInterval(() => this.look(), this.pollMs);
      this.timer.unref();
    }
    return () => {
      this.wakers.delete(wake);
      if (this.wakers.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  private wakeAll(): void {
    for (const wake of this.wakers) wake();
  }

  /** Another process's events: the newest id moved. */
  private look(): void {
    if (this.looking) return;
    this.looking = true;
    latestEventSeq(this.db)
      .then((latest) => {
        if (latest > this.seen) {
          this.seen = latest;
          this.wakeAll();
        }
      })
      .catch((error: unknown) => this.log.warn({ err: error }, "looking for new events failed"))
      .finally(() => {
        this.looking = false;
      });
  }

  close(): void {
    this.unlisten?.();
    clearInterval(this.timer);
    this.wakers.clear();
  }
}

// The delivery worker, one per API process: it claims due deliveries from the queue in the database
// (claimDeliveries: `for update skip locked` under a lease, so that several processes share it and
// each delivery is sent by one at a time), sends each (sender.ts) at most `concurrency` at a time,
// and writes the attempt: a 2xx is done, anything else is tried again after an exponential backoff
// with jitter, until `maxAttempts`, then failed. It runs apart from every request: a slow or
// hanging receiver holds one of its slots for at most the timeout, never the API.
import { openWebhookSecret } from "@flowplane/auth";
import {
  type ClaimedDelivery,
  claimDeliveries,
  type Db,
  type DeliveryAttempt,
  recordAttempt,
  releaseDelivery,
} from "@flowplane/db";
import type { FastifyBaseLogger } from "fastify";
import { RoundLog } from "../core/background";
import { send } from "./sender";

export interface DeliverySettings {
  allowedHosts: readonly string[];
  /** How often due deliveries are looked for (a new event kicks it sooner). */
  tickMs: number;
  /** Deliveries sent at once by this process. */
  concurrency: number;
  /** An attempt's bound. */
  timeoutMs: number;
  /** Attempts before a delivery is failed. */
  maxAttempts: number;
  /** The first retry's delay; each next one doubles, with jitter. */
  backoffMs: number;
}

export const DEFAULT_DELIVERY_SETTINGS: Omit<DeliverySettings, "allowedHosts"> = {
  tickMs: 1000,
  concurrency: 8,
  timeoutMs: 10_000,
  maxAttempts: 8,
  // 1 min, 2, 4, … 64 min: about two hours in all.
  backoffMs: 60_000,
};

/** The delay before attempt `n + 1` after `n` failed: doubling, between half and all of it. */
export function backoff(baseMs: number, failed: number): number {
  const full = baseMs * 2 ** (failed - 1);
  return Math.round(full / 2 + (Math.random() * full) / 2);
}

export class DeliveryWorker {
  private timer: NodeJS.Timeout | undefined;
  private claiming: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private readonly rounds: RoundLog;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly tokenSecret: string,
    private readonly settings: DeliverySettings,
  ) {
    this.rounds = new RoundLog(log, "claiming webhook deliveries failed");
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), this.settings.tickMs);
    this.timer.unref();
    this.kick();
  }

  /** Looks for due deliveries now (a new one was queued, or a slot came free). */
  kick(): void {
    if (this.closed) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = this.claim()
      .then(
        () => this.rounds.succeeded(),
        (error: unknown) => {
          if (!this.closed) this.rounds.failed(error);
        },
      )
      .finally(() => {
        this.claiming = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async claim(): Promise<void> {
    const free = this.settings.concurrency - this.inFlight.size;
    // The lease outlasts an attempt's timeout: a row is taken again only once its sender is gone.
    const leaseMs = this.settings.timeoutMs * 2 + 5_000;
    const claimed = await claimDeliveries(this.db, free, leaseMs);
    for (const delivery of claimed) {
      const sending: Promise<void> = this.deliver(delivery)
        .catch((error: unknown) => {
          if (!this.closed) this.log.error({ err: error }, "a webhook delivery failed to record");
        })
        .finally(() => {
          this.inFlight.delete(sending);
          this.kick();
        });
      this.inFlight.add(sending);
    }
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const secret = openWebhookSecret(this.tokenSecret, {
      id: delivery.webhook_id,
      secret: delivery.secret,
    });
    const attempt: DeliveryAttempt = secret
      ? await send(
          {
            url: delivery.url,
            secret,
            deliveryId: delivery.id,
            eventType: delivery.event_type,
            payload: delivery.payload,
          },
          { ...this.settings, signal: this.abort.signal },
        )
      : {
          at: new Date().toISOString(),
          responseCode: null,
          latencyMs: 0,
          error: "the secret does not open with the platform's secret (it changed since)",
        };
    // Closing aborted it: it is given back, for the next process to try.
    if (this.closed) return releaseDelivery(this.db, delivery);
    const ok =
      attempt.responseCode !== null && attempt.responseCode >= 200 && attempt.responseCode < 300;
    const failed = delivery.attempts.length + 1;
    const outcome = ok
      ? ({ status: "succeeded" } as const)
      : failed >= this.settings.maxAttempts
        ? ({ status: "failed" } as const)
        : ({
            status: "pending",
            next: new Date(Date.now() + backoff(this.settings.backoffMs, failed)),
          } as const);
    await recordAttempt(this.db, delivery, attempt, outcome);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.abort.abort();
    await this.claiming;
    await Promise.all(this.inFlight);
  }
}

// What the platform's background loops (the events runner, the webhook worker, the rollouts'
// runner, the housekeeping) say when a round fails: a database outage once, as a warning, when it
// begins and once when a round succeeds again — not at every tick while it lasts; any other
// failure as an error, every time. The loops themselves keep their timers and try again.
import type { FastifyBaseLogger } from "fastify";
import { isDatabaseUnavailable } from "./errors";

export class RoundLog {
  private outage = false;

  constructor(
    private readonly log: FastifyBaseLogger,
    /** What failed, as the log says it ("numbering events failed"). */
    private readonly failure: string,
  ) {}

  failed(error: unknown, fields: Record<string, unknown> = {}): void {
    if (!isDatabaseUnavailable(error)) {
      this.log.error({ err: error, ...fields }, this.failure);
      return;
    }
    if (this.outage) return;
    this.outage = true;
    this.log.warn(
      { err: error, ...fields },
      `${this.failure}: the database is unavailable; retrying`,
    );
  }

  succeeded(): void {
    if (!this.outage) return;
    this.outage = false;
    this.log.info(`${this.failure} no more: the database is back`);
  }
}

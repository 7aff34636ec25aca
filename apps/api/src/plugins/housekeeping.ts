// Housekeeping on a timer (and at close): the tokens' lastUsedAt written in one batch, then each
// area's sweep (expired tokens, ended sessions, expired invitations, editor codes and device
// registrations deleted), and the idempotency keys past their 24 hours (core/writes.ts). Every process sharing the database runs its own; the deletions are
// idempotent.
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { deleteExpiredIdempotencyKeys } from "@flowplane/db";
import { RoundLog } from "../core/background";
import type { Area, Platform } from "./area";

export interface HousekeepingOptions {
  platform: Platform;
  areas: readonly Area[];
}

export const housekeepingPlugin = fp(
  async (app: FastifyInstance, { platform, areas }: HousekeepingOptions) => {
    const { authenticator } = platform;
    const rounds = new RoundLog(app.log, "token housekeeping failed");
    const run = async () => {
      try {
        await authenticator.flushUsage();
        for (const area of areas) await area.sweep?.(platform, app.log);
        await deleteExpiredIdempotencyKeys(platform.db, new Date());
        rounds.succeeded();
      } catch (error) {
        rounds.failed(error);
      }
    };
    const running = new Set<Promise<void>>();
    const sweep = () => {
      const swept = run().finally(() => running.delete(swept));
      running.add(swept);
      return swept;
    };
    const timer = setInterval(() => void sweep(), platform.options.sweepIntervalMs ?? 60_000);
    timer.unref();
    app.addHook("onClose", async () => {
      clearInterval(timer);
      await Promise.all(running);
      await authenticator.flushUsage();
    });
    app.decorate("sweepTokens", sweep);
  },
  { name: "housekeeping" },
);

declare module "fastify" {
  interface FastifyInstance {
    /** Runs the token housekeeping now (tests and shutdown). */
    sweepTokens(): Promise<void>;
  }
}

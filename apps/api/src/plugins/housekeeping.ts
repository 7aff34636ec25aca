// Housekeeping on a timer (and at close): the tokens' lastUsedAt written in one batch, expired
// tokens, ended sessions, expired invitations, editor codes and device registrations deleted.
// Every process sharing the database runs its own; the deletions are idempotent.
import {
  type Db,
  deleteExpiredDeviceRegistrations,
  deleteExpiredEditorCodes,
  deleteExpiredInvitations,
  deleteExpiredTokens,
  deleteStaleSessions,
} from "@flowplane/db";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import type { Authenticator } from "../core/authenticator";

export interface HousekeepingOptions {
  db: Db;
  authenticator: Authenticator;
  /** How often it runs (default 60 s). */
  intervalMs?: number;
  /** A session unused this long has ended. */
  sessionIdleMs: number;
}

export const housekeepingPlugin = fp(
  async (app: FastifyInstance, opts: HousekeepingOptions) => {
    const { db, authenticator } = opts;
    const run = async () => {
      try {
        await authenticator.flushUsage();
        const expired = await deleteExpiredTokens(db);
        if (expired.length > 0) app.log.info({ count: expired.length }, "deleted expired tokens");
        const stale = await deleteStaleSessions(db, new Date(), opts.sessionIdleMs);
        if (stale > 0) app.log.info({ count: stale }, "deleted ended sessions");
        await deleteExpiredInvitations(db);
        await deleteExpiredEditorCodes(db);
        await deleteExpiredDeviceRegistrations(db);
      } catch (error) {
        app.log.error({ err: error }, "token housekeeping failed");
      }
    };
    // Sweeps under way: a close waits for them before the database goes.
    const running = new Set<Promise<void>>();
    const sweep = () => {
      const swept = run().finally(() => running.delete(swept));
      running.add(swept);
      return swept;
    };
    const timer = setInterval(() => void sweep(), opts.intervalMs ?? 60_000);
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

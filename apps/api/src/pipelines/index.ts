// The pipelines area: an application's delivery pipelines and their stages, the deploy that moves
// a snapshot from one stage to the next, and the operations a deploy runs as.
import type { FastifyInstance } from "fastify";
import { router } from "../core/trpc";
import type { Db } from "@flowplane/db";
import { Deploys, failAbandonedDeploys } from "./background-deploys";
import { deployProcedures } from "./deploy";
import { pipelineProcedures } from "./procedures";
import { stageProcedures } from "./stages";

export const pipelines = {
  procedures: {
    pipelines: router({ ...pipelineProcedures, ...stageProcedures, ...deployProcedures }),
  },
  /**
   * Fails, once the server listens and every `sweepIntervalMs` after, the deploys a process that
   * is gone left pending; waits, when the server closes, for a sweep under way and for the deploys
   * still running in the background.
   */
  routes: async (
    app: FastifyInstance,
    opts: { db: Db; deploys: Deploys; sweepIntervalMs?: number },
  ) => {
    const sweep = async () => {
      try {
        const failed = await failAbandonedDeploys(opts.db);
        if (failed > 0) app.log.warn({ count: failed }, "failed deploys a stopped process left");
      } catch (error) {
        app.log.error({ err: error }, "abandoned deploys not checked");
      }
    };
    // One sweep at a time, and the last one is what a close waits for.
    let sweeping = Promise.resolve();
    const sweepNow = () => {
      sweeping = sweeping.then(sweep);
    };
    const timer = setInterval(sweepNow, opts.sweepIntervalMs ?? 30_000);
    timer.unref();
    // In the background once listening, not in onReady: Fastify fails a start whose onReady
    // hooks take longer than its plugin timeout (10 s), and a database busy for that long (its
    // one PGlite connection taken, a server under load) must not fail a start for a cleanup that
    // can wait.
    app.addHook("onListen", async () => sweepNow());
    app.addHook("onClose", async () => {
      clearInterval(timer);
      await sweeping;
      await opts.deploys.drain();
    });
  },
};
export { Deploys };

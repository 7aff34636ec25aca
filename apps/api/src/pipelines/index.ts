// The pipelines area: an application's delivery pipelines and their stages, the deploy that moves
// a snapshot from one stage to the next, and the operations a deploy runs as.
import type { FastifyInstance } from "fastify";
import { router } from "../core/trpc";
import type { Db } from "@flowplane/db";
import { deployProcedures, Deploys, failAbandonedDeploys } from "./deploy";
import { pipelineProcedures } from "./procedures";
import { stageProcedures } from "./stages";

export const pipelines = {
  procedures: {
    pipelines: router({ ...pipelineProcedures, ...stageProcedures, ...deployProcedures }),
  },
  /**
   * Fails, at start and every `sweepIntervalMs` after, the deploys a process that is gone left
   * pending; waits, when the server closes, for the deploys still running in the background.
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
    const timer = setInterval(() => void sweep(), opts.sweepIntervalMs ?? 30_000);
    timer.unref();
    app.addHook("onReady", sweep);
    app.addHook("onClose", async () => {
      clearInterval(timer);
      await opts.deploys.drain();
    });
  },
};
export { Deploys };

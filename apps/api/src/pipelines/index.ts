// The pipelines area: an application's delivery pipelines and their stages, the deploy that moves
// a snapshot from one stage to the next, and the operations a deploy runs as.
import type { FastifyInstance } from "fastify";
import { router } from "../core/trpc";
import { deployProcedures, Deploys } from "./deploy";
import { pipelineProcedures } from "./procedures";
import { stageProcedures } from "./stages";

export const pipelines = {
  procedures: {
    pipelines: router({ ...pipelineProcedures, ...stageProcedures, ...deployProcedures }),
  },
  /** Waits, when the server closes, for the deploys still running in the background. */
  routes: async (app: FastifyInstance, opts: { deploys: Deploys }) => {
    app.addHook("onClose", () => opts.deploys.drain());
  },
};
export { Deploys };

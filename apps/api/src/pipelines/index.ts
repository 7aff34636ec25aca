// The pipelines area: an application's delivery pipelines and their stages, the deploy that moves
// a snapshot from one stage to the next, and the operations a deploy runs as.
import { router } from "../core/trpc";
import { deviceGroupPages } from "../devices/index";
import type { Area } from "../plugins/area";
import { snapshotsRouter } from "../snapshots/index";
import { Deploys, failAbandonedDeploys } from "./background-deploys";
import { deployProcedures } from "./deploy";
import { pipelineProcedures } from "./procedures";
import { stageProcedures } from "./stages";
import { pipelinePages } from "./pages/pipelines";

// The snapshots' procedure under its name in the API's router, for the device group pages.
const snapshotProcedures = router({ snapshots: snapshotsRouter });

/** How often abandoned deploys are looked for. */
const SWEEP_INTERVAL_MS = 30_000;

export const pipelines = {
  procedures: {
    pipelines: router({ ...pipelineProcedures, ...stageProcedures, ...deployProcedures }),
  },
  /**
   * The deploys under way in this process (what the procedures start), and the sweep that fails,
   * once the server listens and every 30 s after, the deploys a process that is gone
   * left pending; a close waits for a sweep under way and for the deploys still running.
   */
  /**
   * The team's pipelines and a pipeline's page; and the device groups' pages (the devices area's,
   * registered here: a group's target is one of the application's snapshots, which the devices
   * area cannot read, as the snapshots area imports it).
   */
  pages: () => {
    const groupPages = deviceGroupPages(async (context, applicationId) => {
      const page = await snapshotProcedures
        .createCaller(context)
        .snapshots.ofApplication({ applicationId, limit: 100 });
      return page.snapshots;
    });
    return (app, deps) => {
      groupPages(app, deps);
      pipelinePages(app, deps);
    };
  },
  async start(app, { db, services }) {
    // A deploy is a mutation that ends after its reply: what follows the database's state (the
    // devices' channel) is told when it ends, as after any mutation.
    const deploys = new Deploys(db, app.log, () => {
      for (const changed of services.afterMutation ?? []) changed();
    });
    const sweep = async () => {
      try {
        const failed = await failAbandonedDeploys(db);
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
    const timer = setInterval(sweepNow, SWEEP_INTERVAL_MS);
    timer.unref();
    // In the background once listening, not in onReady: Fastify fails a start whose onReady
    // hooks take longer than its plugin timeout (10 s), and a database busy for that long (its
    // one PGlite connection taken, a server under load) must not fail a start for a cleanup that
    // can wait.
    app.addHook("onListen", async () => sweepNow());
    app.addHook("onClose", async () => {
      clearInterval(timer);
      await sweeping;
      await deploys.drain();
    });
    return { deploys };
  },
} satisfies Area;
export { Deploys };

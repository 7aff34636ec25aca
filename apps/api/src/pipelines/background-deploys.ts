// The deploys this process runs in the background (`Deploys`: awaited when the server closes,
// their operations touched while they run), and the sweep that fails those a process that is gone
// left pending (`failAbandonedDeploys`).
import { type Db, findPipeline, failAbandonedOperations, touchOperations } from "@flowplane/db";
import type { FastifyBaseLogger } from "fastify";
import { recordStageDeployFailed } from "./events";
import type { DeploySubject } from "./views";

/** How often a running deploy's operation is touched (its process's heartbeat). */
const HEARTBEAT_MS = 10_000;
/** A pending operation untouched this long was left by a process that is gone. */
export const ABANDONED_AFTER_SECONDS = 60;

/**
 * The deploys this process runs in the background: the server waits for them when it closes, so
 * none is cut off halfway (its target's action claim would otherwise stay until it goes stale).
 * While any runs, their operations are touched every few seconds: one whose heartbeat stopped was
 * left by a process that died, and is failed (`failAbandonedDeploys`) rather than pending forever.
 */
export class Deploys {
  private readonly running = new Map<Promise<void>, string>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly db?: Db,
    private readonly log?: FastifyBaseLogger,
    /** Told when a deploy has ended (it changed what devices should run, perhaps). */
    private readonly ended?: () => void,
  ) {}

  run(operationId: string, work: () => Promise<void>): void {
    const promise = work().finally(() => {
      this.ended?.();
      this.running.delete(promise);
      if (this.running.size === 0 && this.heartbeat) {
        clearInterval(this.heartbeat);
        this.heartbeat = undefined;
      }
    });
    this.running.set(promise, operationId);
    if (this.db && !this.heartbeat) {
      const db = this.db;
      this.heartbeat = setInterval(() => {
        touchOperations(db, [...this.running.values()]).catch((error: unknown) =>
          this.log?.error({ err: error }, "running deploys not touched"),
        );
      }, HEARTBEAT_MS);
      this.heartbeat.unref();
    }
  }

  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.keys()]);
  }
}

/**
 * Fails the deploys a process that is gone left pending (at start, and on every sweep after): their
 * operation says so, and the team's audit log has `application.pipeline.stage-deploy-failed`
 * (Flowplane's: FlowFuse records no failed deploy). The target they held is free again.
 */
export async function failAbandonedDeploys(db: Db): Promise<number> {
  const failed = await db.transaction().execute(async (trx) => {
    const rows = await failAbandonedOperations(trx, ABANDONED_AFTER_SECONDS, {
      code: "deploy_interrupted",
      message:
        "The platform stopped while this deploy ran, so it did not finish: check the target, and deploy again",
    });
    for (const row of rows) {
      const subject = row.subject as unknown as DeploySubject;
      const pipeline = await findPipeline(trx, subject.pipeline.id);
      await recordStageDeployFailed(trx, row, pipeline);
    }
    return rows.length;
  });
  return failed;
}

declare module "../core/trpc" {
  interface Context {
    /** Runs deploys in the background, and waits for them when the server closes. */
    deploys?: Deploys;
  }
}

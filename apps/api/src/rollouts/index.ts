// The rollouts area: a snapshot rolled out to an application's devices wave by wave, each device
// gated on its health (docs/rollouts.md) — the procedures, the runner that moves rollouts on, and
// the route where a device's flows report to the rollout that watches them, and their pages.
import { router } from "../core/trpc";
import type { Area } from "../plugins/area";
import { HEALTH_REPORT, healthReportRoute } from "./health";
import { rolloutPages } from "./pages/lists";
import { rolloutProcedures } from "./procedures";
import { RolloutRunner } from "./runner";

declare module "../plugins/area" {
  interface AppOptions {
    /** How often the rollouts under way are moved on (default 1 s). */
    rolloutTickMs?: number;
  }
}

export const rollouts = {
  procedures: { rollouts: router(rolloutProcedures) },
  /** A rollout's page, a group's and an application's rollouts, and the form that starts one. */
  pages: () => rolloutPages,
  async start(app, { db, services, options }) {
    const runner = new RolloutRunner(db, app.log, options.rolloutTickMs ?? 1000, () => {
      for (const changed of services.afterMutation ?? []) changed();
    });
    app.addHook("onListen", async () => runner.start());
    app.addHook("onClose", async () => runner.close());
    return { rollouts: runner };
  },
  /** Where a device's flows report to the rollout that watches them (health.ts). */
  async machines(app, { db, tokenSecret, services }) {
    await app.register(healthReportRoute, {
      db,
      tokenSecret,
      poke: () => services.rollouts?.poke(),
    });
  },
  docs: [HEALTH_REPORT],
} satisfies Area;

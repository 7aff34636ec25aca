// The webhooks area (docs/webhooks.md): a team's hooks and their delivery logs, the events
// consumer that queues a delivery per (hook, event) in the numbering transaction, and the worker
// that sends them from the queue in the database, one per API process.
import { pruneDeliveries } from "@flowplane/db";
import { router } from "../core/trpc";
import type { Area } from "../plugins/area";
import { deliveryProcedures } from "./deliveries";
import { webhookProcedures } from "./procedures";
import { queueDeliveries } from "./queue";
import { DEFAULT_DELIVERY_SETTINGS, type DeliverySettings, DeliveryWorker } from "./worker";

declare module "../plugins/area" {
  interface AppOptions {
    /** Hosts (names, addresses) webhooks may point to though not public (WEBHOOK_ALLOWED_HOSTS). */
    webhookAllowedHosts?: string[];
    /** The delivery worker's figures (tests shorten them): worker.ts has the defaults. */
    webhookDelivery?: Partial<Omit<DeliverySettings, "allowedHosts">>;
    /** How long a delivery done stays in its hook's log (default 7 days). */
    webhookDeliveryRetentionHours?: number;
  }
}

declare module "../core/trpc" {
  interface Context {
    /** The webhooks' worker, and where hooks may point besides public addresses. */
    webhooks?: { worker: DeliveryWorker; allowedHosts: readonly string[] };
  }
}

export const webhooks = {
  procedures: { webhooks: router({ ...webhookProcedures, ...deliveryProcedures }) },
  async start(app, { db, tokenSecret, services, options }) {
    const allowedHosts = (options.webhookAllowedHosts ?? []).map((h) => h.toLowerCase());
    const worker = new DeliveryWorker(db, app.log, tokenSecret, {
      ...DEFAULT_DELIVERY_SETTINGS,
      ...options.webhookDelivery,
      allowedHosts,
    });
    services.events?.addConsumer(queueDeliveries);
    // After the numbering transaction commits, what it queued is there to claim.
    services.events?.listen(() => worker.kick());
    app.addHook("onListen", async () => worker.start());
    app.addHook("onClose", async () => worker.close());
    return { webhooks: { worker, allowedHosts } };
  },
  async sweep({ db, options }) {
    const hours = options.webhookDeliveryRetentionHours ?? 24 * 7;
    await pruneDeliveries(db, new Date(Date.now() - hours * 3_600_000));
  },
} satisfies Area;

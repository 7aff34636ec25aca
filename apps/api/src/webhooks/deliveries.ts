// A webhook's delivery log (docs/webhooks.md, "The delivery log"): each delivery's status and
// attempts (time, response code, latency, error), and redelivery — a new attempt now, under the
// same delivery id (the `Flowplane-Delivery` header), whatever the delivery came to.
import {
  DeliveryIdInput,
  ListDeliveriesInput,
  WebhookDelivery,
  WebhookDeliveryList,
} from "@flowplane/contract";
import { findDelivery, listDeliveries, redeliver } from "@flowplane/db";
import { notFound } from "../core/errors";
import { procedure } from "../core/trpc";
import { hookOf, TAG, type TeamContext } from "./procedures";
import { deliveryView } from "./views";

async function deliveryOf(ctx: TeamContext, input: { hookId: string; deliveryId: string }) {
  const hook = await hookOf(ctx, input.hookId);
  const delivery = await findDelivery(ctx.db, hook.id, input.deliveryId);
  if (!delivery) throw notFound();
  return delivery;
}

export const deliveryProcedures = {
  deliveries: procedure
    .meta({
      permission: "team:webhook:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/webhooks/{hookId}/deliveries",
        tags: [TAG],
        summary: "A webhook's delivery log (owners)",
        description:
          "Oldest first, a page at a time (`meta.next_cursor`): each delivery's event, status (`pending`, `succeeded`, `failed`) and attempts. A delivery done is kept 7 days.",
      },
    })
    .input(ListDeliveriesInput)
    .output(WebhookDeliveryList)
    .query(async ({ ctx, input }) => {
      const hook = await hookOf(ctx, input.hookId);
      const page = await listDeliveries(ctx.db, hook.id, input);
      return {
        meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
        count: page.total,
        deliveries: page.rows.map((row) => deliveryView(row, ctx.baseUrl)),
      };
    }),

  delivery: procedure
    .meta({
      permission: "team:webhook:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/webhooks/{hookId}/deliveries/{deliveryId}",
        tags: [TAG],
        summary: "A delivery with its attempts (owners)",
      },
    })
    .input(DeliveryIdInput)
    .output(WebhookDelivery)
    .query(async ({ ctx, input }) => deliveryView(await deliveryOf(ctx, input), ctx.baseUrl)),

  redeliver: procedure
    .meta({
      permission: "team:webhook:edit",
      openapi: {
        method: "POST",
        path: "/api/v1/teams/{teamId}/webhooks/{hookId}/deliveries/{deliveryId}/redeliver",
        tags: [TAG],
        summary: "Send a delivery again now (owners)",
        description:
          "One new attempt, as soon as a worker is free, with the same `Flowplane-Delivery` id and the envelope as first sent, signed anew. Not audited (it changes nothing of the team's).",
      },
    })
    .input(DeliveryIdInput)
    .output(WebhookDelivery)
    .mutation(async ({ ctx, input }) => {
      const delivery = await deliveryOf(ctx, input);
      const row = await redeliver(ctx.db, delivery.id);
      ctx.webhooks?.worker.kick();
      return deliveryView(row, ctx.baseUrl);
    }),
};

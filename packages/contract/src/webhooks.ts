// Webhooks (docs/webhooks.md): a team's hooks — a URL, the event types it hears, a signing secret
// shown once — and each hook's delivery log.
import { z } from "zod";
import { Id, Links, ListMeta, PageInput, Text, Timestamp } from "./common";

/** An http(s) URL, bounded; where it may point is the API's to judge (docs/webhooks.md). */
const WebhookUrl = Text.max(2048)
  .check(z.url({ protocol: /^https?$/ }))
  .refine((url) => {
    try {
      const parsed = new URL(url);
      return !parsed.username && !parsed.password;
    } catch {
      return true; // Not a URL: the check above says so.
    }
  }, "A user name or password in the URL is not taken: the signature authenticates deliveries")
  .describe("Where deliveries are POSTed: http or https, with no user name or password");

/** Event types: `team.settings.updated`; an empty list (or `*`) means every type. */
const EventTypes = z
  .array(
    Text.min(1)
      .max(128)
      .regex(/^(\*|[A-Za-z0-9_.-]+)$/, "Not an event type"),
  )
  .max(100)
  .describe("The event types it hears; empty or `*`: every type");

export const Webhook = z
  .object({
    id: Id,
    url: z.string(),
    eventTypes: z.array(z.string()).describe("Empty: every type"),
    active: z.boolean(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    links: Links,
  })
  .meta({ id: "Webhook" });

export const WebhookWithSecret = Webhook.extend({
  secret: z.string().describe("The signing secret: shown in this reply only"),
}).meta({ id: "WebhookWithSecret" });

export const WebhookList = z
  .object({ meta: ListMeta, count: z.number().int(), webhooks: z.array(Webhook) })
  .meta({ id: "WebhookList" });

export const WebhookIdInput = z.strictObject({ teamId: Id, hookId: Id });

export const ListWebhooksInput = z.strictObject({ teamId: Id, ...PageInput });

export const CreateWebhookInput = z.strictObject({
  teamId: Id,
  url: WebhookUrl,
  eventTypes: EventTypes.default([]),
  active: z.boolean().default(true),
});

export const UpdateWebhookInput = z.strictObject({
  teamId: Id,
  hookId: Id,
  url: WebhookUrl.optional(),
  eventTypes: EventTypes.optional(),
  active: z.boolean().optional(),
});

export const DELIVERY_STATES = ["pending", "succeeded", "failed"] as const;

export const WebhookAttempt = z
  .object({
    at: Timestamp,
    responseCode: z.number().int().nullable().describe("None: no answer came"),
    latencyMs: z.number().int(),
    error: z.string().nullable(),
  })
  .meta({ id: "WebhookAttempt" });

export const WebhookDelivery = z
  .object({
    id: Id.describe("The `Flowplane-Delivery` header's value; redelivery keeps it"),
    status: z.enum(DELIVERY_STATES),
    event: z.object({ id: z.string(), type: z.string() }),
    attempts: z.array(WebhookAttempt),
    nextAttemptAt: Timestamp.nullable().describe("When it is tried next, while pending"),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    links: Links,
  })
  .meta({ id: "WebhookDelivery" });

export const WebhookDeliveryList = z
  .object({ meta: ListMeta, count: z.number().int(), deliveries: z.array(WebhookDelivery) })
  .meta({ id: "WebhookDeliveryList" });

export const ListDeliveriesInput = z.strictObject({ teamId: Id, hookId: Id, ...PageInput });

export const DeliveryIdInput = z.strictObject({ teamId: Id, hookId: Id, deliveryId: Id });

export type Webhook = z.infer<typeof Webhook>;
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

// Webhooks and deliveries as the API answers them.
import type { Webhook, WebhookDelivery } from "@flowplane/contract";
import type { DeliveryRow, WebhookRow } from "@flowplane/db";

export function webhookView(row: WebhookRow, baseUrl: string): Webhook {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.event_types,
    active: row.active,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    links: { self: `${baseUrl}/api/v1/teams/${row.team_id}/webhooks/${row.id}` },
  };
}

export function deliveryView(row: DeliveryRow, baseUrl: string): WebhookDelivery {
  return {
    id: row.id,
    status: row.status,
    event: { id: row.event_id, type: row.event_type },
    attempts: row.attempts,
    nextAttemptAt: row.status === "pending" ? row.next_attempt_at.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    links: {
      self: `${baseUrl}/api/v1/teams/${row.team_id}/webhooks/${row.webhook_id}/deliveries/${row.id}`,
    },
  };
}

// The events' tables (migrations/2026-11-29T2100-events.ts).
import type { ColumnType, Generated } from "kysely";
import type { CreatedAt } from "./schema-columns";

export interface EventsTable {
  id: Generated<string>;
  /** bigint: the driver answers text. Null until the sequencer reaches the row. */
  seq: ColumnType<string | null, never, string>;
  type: string;
  team_id: string | null;
  entity_type: string;
  entity_id: string | null;
  actor_id: string | null;
  token_id: string | null;
  audit_id: string | null;
  data: ColumnType<Record<string, unknown>, string | undefined, string>;
  created_at: CreatedAt;
}

export interface EventRetentionTable {
  id: number;
  pruned_through: ColumnType<string, string, string>;
}

/** A team's webhook (migrations/2026-11-29T2110-webhooks.ts). */
export interface WebhooksTable {
  id: string;
  team_id: string;
  url: string;
  /** An empty list: every type. */
  event_types: ColumnType<string[], string | undefined, string>;
  active: ColumnType<boolean, boolean | undefined, boolean>;
  /** Sealed (webhooks' secrets.ts in the API). */
  secret: string;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** One attempt at a delivery, as the log shows it. */
export interface DeliveryAttempt {
  at: string;
  /** The receiver's status code; null when none came (refused, timed out, unreachable). */
  responseCode: number | null;
  latencyMs: number;
  error: string | null;
}

export type DeliveryStatus = "pending" | "succeeded" | "failed";

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  team_id: string;
  event_id: string;
  event_type: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  status: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>;
  attempts: ColumnType<DeliveryAttempt[], string | undefined, string>;
  next_attempt_at: ColumnType<Date, Date | string | undefined, Date | string>;
  lease_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

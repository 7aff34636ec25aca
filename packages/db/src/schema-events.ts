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

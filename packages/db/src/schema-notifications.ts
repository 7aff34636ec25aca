// The notifications' table (migrations/2026-11-29T2120-notifications.ts).
import type { ColumnType, Generated } from "kysely";
import type { CreatedAt } from "./schema-columns";

export interface NotificationsTable {
  id: string;
  user_id: string;
  type: string;
  data: ColumnType<Record<string, unknown>, string, string>;
  read: Generated<boolean>;
  /** bigint: the driver answers text. */
  event_seq: ColumnType<string | null, string | null, string | null>;
  created_at: CreatedAt;
}

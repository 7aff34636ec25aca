// The column types the tables of schema.ts share: timestamps, and JSON kept as text.
import type { ColumnType } from "kysely";

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
export type Json<T = Record<string, unknown>> = ColumnType<T, string | undefined, string>;

// The platform as a whole: the settings administrators change, and the counts of its statistics.
import { type Kysely, sql } from "kysely";
import type { Database } from "./schema";

type Db = Kysely<Database>;

/** The settings administrators change, by their FlowFuse keys. */
export interface PlatformSettings {
  "team:create": boolean;
}

/** What each setting is until an administrator changes it: Flowplane lets anyone create teams. */
export const SETTING_DEFAULTS: PlatformSettings = { "team:create": true };

/** The settings administrators changed, by key (a key with no row has its default). */
export async function listPlatformSettings(db: Db): Promise<Record<string, unknown>> {
  const rows = await db.selectFrom("platform_settings").select(["key", "value"]).execute();
  return Object.fromEntries(rows.map((row) => [row.key, row.value]));
}

/** Every setting: as an administrator changed it, else its default. */
export async function platformSettings(db: Db): Promise<PlatformSettings> {
  return { ...SETTING_DEFAULTS, ...(await listPlatformSettings(db)) } as PlatformSettings;
}

/** Sets these keys; the caller gives the transaction the audit entry is in. */
export async function writePlatformSettings(
  trx: Db,
  values: Record<string, unknown>,
): Promise<void> {
  const rows = Object.entries(values).map(([key, value]) => ({
    key,
    value: JSON.stringify(value),
  }));
  if (rows.length === 0) return;
  await trx
    .insertInto("platform_settings")
    .values(rows)
    .onConflict((c) =>
      c
        .column("key")
        .doUpdateSet({ value: (eb) => eb.ref("excluded.value"), updated_at: sql`now()` }),
    )
    .execute();
}

/** Counts by one value, as `{ value: count }`. */
type ByValue = Record<string, number>;

export interface PlatformCounts {
  userCount: number;
  adminCount: number;
  inviteCount: number;
  teamCount: number;
  teamsByType: ByValue;
  instanceCount: number;
  instancesByState: ByValue;
  deviceCount: number;
  devicesByMode: ByValue;
  devicesByLastSeen: { never: number; day: number; week: number; month: number; older: number };
  mqttClientCount: number;
}

const byValue = (rows: { key: string; n: number }[]): ByValue =>
  Object.fromEntries(rows.map((row) => [row.key, row.n]));

/** The platform's statistics, as FlowFuse's /admin/stats counts them. */
export async function platformCounts(db: Db): Promise<PlatformCounts> {
  const grouped = (query: ReturnType<typeof sql>) =>
    sql<{ key: string; n: number }>`${query}`.execute(db).then((r) => byValue(r.rows));
  const [scalars, teamsByType, instancesByState, devicesByMode] = await Promise.all([
    sql<
      Omit<
        PlatformCounts,
        "teamsByType" | "instanceCount" | "instancesByState" | "devicesByMode" | "devicesByLastSeen"
      > & {
        never: number;
        day: number;
        week: number;
        month: number;
      }
    >`select
        (select count(*)::int from users) as "userCount",
        (select count(*)::int from users where admin) as "adminCount",
        (select count(*)::int from invitations where expires_at > now()) as "inviteCount",
        (select count(*)::int from teams) as "teamCount",
        (select count(*)::int from devices) as "deviceCount",
        (select count(*)::int from team_broker_clients) as "mqttClientCount",
        (select count(*)::int from devices where last_seen_at is null) as never,
        (select count(*)::int from devices where last_seen_at >= now() - interval '1 day') as day,
        (select count(*)::int from devices where last_seen_at >= now() - interval '7 days') as week,
        (select count(*)::int from devices where last_seen_at >= now() - interval '28 days') as month`
      .execute(db)
      .then((r) => r.rows[0]!),
    grouped(sql`select tt.name as key, count(*)::int as n from teams t
      join team_types tt on tt.id = t.type_id group by tt.name`),
    grouped(sql`select state as key, count(*)::int as n from projects group by state`),
    grouped(sql`select mode as key, count(*)::int as n from devices group by mode`),
  ]);
  const { never, day, week, month, ...counts } = scalars;
  return {
    ...counts,
    teamsByType,
    instanceCount: Object.values(instancesByState).reduce((sum, n) => sum + n, 0),
    instancesByState,
    devicesByMode,
    // FlowFuse's bands: each count is of those seen in it and not a nearer one.
    devicesByLastSeen: {
      never,
      day,
      week: week - day,
      month: month - week,
      older: counts.deviceCount - never - month,
    },
  };
}

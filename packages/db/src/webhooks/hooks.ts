// A team's webhooks: where to POST which of its events, with a sealed signing secret.
import type { Kysely, Selectable } from "kysely";
import { newId } from "../ids";
import { countAll, keysetPage, type Page, type PageRequest } from "../paging";
import type { Database } from "../schema";
import type { WebhooksTable } from "../schema-events";

export type WebhookRow = Selectable<WebhooksTable>;

/** jsonb as the driver answers it: parsed (pg, PGlite) or text. */
export function fromJson<T>(value: unknown): T {
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

const normal = (row: WebhookRow): WebhookRow => ({
  ...row,
  event_types: fromJson<string[]>(row.event_types),
});

export async function insertWebhook(
  db: Kysely<Database>,
  values: { teamId: string; url: string; eventTypes: string[]; active: boolean },
  sealedSecret: (id: string) => string,
): Promise<WebhookRow> {
  const id = newId();
  const row = await db
    .insertInto("webhooks")
    .values({
      id,
      team_id: values.teamId,
      url: values.url,
      event_types: JSON.stringify(values.eventTypes),
      active: values.active,
      secret: sealedSecret(id),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return normal(row);
}

export async function findWebhook(
  db: Kysely<Database>,
  teamId: string,
  id: string,
): Promise<WebhookRow | undefined> {
  const row = await db
    .selectFrom("webhooks")
    .selectAll()
    .where("team_id", "=", teamId)
    .where("id", "=", id)
    .executeTakeFirst();
  return row && normal(row);
}

export async function listWebhooks(
  db: Kysely<Database>,
  teamId: string,
  page: PageRequest,
): Promise<Page<WebhookRow>> {
  const rows = db.selectFrom("webhooks").selectAll().where("team_id", "=", teamId);
  const count = db.selectFrom("webhooks").select(countAll()).where("team_id", "=", teamId);
  const found = await keysetPage(rows, count, { table: "webhooks", key: "created_at" }, page);
  return { ...found, rows: found.rows.map(normal) };
}

export async function updateWebhook(
  db: Kysely<Database>,
  id: string,
  changes: { url?: string; eventTypes?: string[]; active?: boolean; secret?: string },
): Promise<WebhookRow> {
  const row = await db
    .updateTable("webhooks")
    .set({
      ...(changes.url !== undefined && { url: changes.url }),
      ...(changes.eventTypes !== undefined && { event_types: JSON.stringify(changes.eventTypes) }),
      ...(changes.active !== undefined && { active: changes.active }),
      ...(changes.secret !== undefined && { secret: changes.secret }),
      updated_at: new Date(),
    })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return normal(row);
}

export async function deleteWebhook(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom("webhooks").where("id", "=", id).execute();
}

/** The active hooks of these teams, with what they hear: what a batch of events may reach. */
export async function activeWebhooksOf(
  db: Kysely<Database>,
  teamIds: string[],
): Promise<Pick<WebhookRow, "id" | "team_id" | "event_types">[]> {
  if (teamIds.length === 0) return [];
  const rows = await db
    .selectFrom("webhooks")
    .select(["id", "team_id", "event_types"])
    .where("team_id", "in", teamIds)
    .where("active", "=", true)
    .execute();
  return rows.map((row) => ({ ...row, event_types: fromJson<string[]>(row.event_types) }));
}

/** The active hooks these pipeline stages name, by stage: whom a deploy into each must tell. */
export async function stageWebhooksOf(
  db: Kysely<Database>,
  stageIds: string[],
): Promise<{ stage_id: string; webhook_id: string; team_id: string }[]> {
  if (stageIds.length === 0) return [];
  return db
    .selectFrom("pipeline_stages")
    .innerJoin("webhooks", "webhooks.id", "pipeline_stages.webhook_id")
    .select([
      "pipeline_stages.id as stage_id",
      "webhooks.id as webhook_id",
      "webhooks.team_id as team_id",
    ])
    .where("pipeline_stages.id", "in", stageIds)
    .where("webhooks.active", "=", true)
    .execute();
}

// A team's webhooks (docs/webhooks.md): owners list, create, read, change and delete them. The
// signing secret is made here (random, 32 bytes), sealed in the database and shown in the create
// (and rotate) reply only. A URL is checked where it may point at creation and on each change
// (addresses.ts), and again at each delivery; no request is sent at creation. Every change is
// audited in the team's log (`team.webhook.created|updated|deleted`).
import { randomBytes } from "node:crypto";
import {
  CreateWebhookInput,
  ListWebhooksInput,
  Status,
  UpdateWebhookInput,
  Webhook,
  WebhookIdInput,
  WebhookList,
  WebhookWithSecret,
} from "@flowplane/contract";
import { sealWebhookSecret } from "@flowplane/auth";
import {
  type Db,
  deleteWebhook,
  findWebhook,
  insertWebhook,
  listWebhooks,
  recordAudit,
  updateWebhook,
  type TeamForUser,
  type WebhookRow,
} from "@flowplane/db";
import { teamLog } from "../core/audit";
import { sql } from "kysely";
import { lockForTransaction } from "@flowplane/db";
import { ApiError, notFound } from "../core/errors";
import { actorOf, type Context, procedure, teamOf } from "../core/trpc";
import { assertUrlAllowed } from "./addresses";
import { webhookView } from "./views";

export const TAG = "Webhooks";

const newSecret = () => `whsec_${randomBytes(32).toString("base64url")}`;

/** A team procedure's context: the middleware loaded the team. */
export type TeamContext = Context & { team: TeamForUser | undefined };

export async function hookOf(ctx: TeamContext, hookId: string) {
  const hook = await findWebhook(ctx.db, teamOf(ctx).team.id, hookId);
  if (!hook) throw notFound();
  return hook;
}

function recordHookEvent(
  trx: Db,
  verb: "created" | "updated" | "deleted",
  ctx: TeamContext,
  hook: WebhookRow,
  more: Record<string, unknown> = {},
): Promise<void> {
  const { team } = teamOf(ctx);
  const body = {
    team: { id: team.id, name: team.name, slug: team.slug },
    // The URL's origin only: receivers often keep their credential in the path, and this body
    // is an event that the team's other hooks are sent.
    webhook: {
      id: hook.id,
      url: new URL(hook.url).origin,
      eventTypes: hook.event_types,
      active: hook.active,
    },
    ...more,
  };
  const event = `team.webhook.${verb}`;
  return recordAudit(trx, { event, ...teamLog(team.id), actor: actorOf(ctx), body });
}

const allowedHosts = (ctx: Context) => ctx.webhooks?.allowedHosts ?? [];

/** A team's hooks at most: each event costs a delivery per hook, in the numbering transaction. */
export const MAX_WEBHOOKS_PER_TEAM = 25;

/** Refuses a team's hook past the limit (the team's lock held: two creates count in turn). */
async function assertRoomForHook(trx: Db, teamId: string): Promise<void> {
  await lockForTransaction(trx, `webhooks:${teamId}`);
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from webhooks where team_id = ${teamId}`.execute(trx);
  if ((rows[0]?.n ?? 0) >= MAX_WEBHOOKS_PER_TEAM) {
    throw new ApiError(
      409,
      "webhook_limit",
      `A team has at most ${MAX_WEBHOOKS_PER_TEAM} webhooks: delete one, or let one hear more event types`,
    );
  }
}

export const webhookProcedures = {
  list: procedure
    .meta({
      permission: "team:webhook:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/webhooks",
        tags: [TAG],
        summary: "A team's webhooks (owners)",
        description:
          "Oldest first, a page at a time (`meta.next_cursor`). Secrets are never shown.",
      },
    })
    .input(ListWebhooksInput)
    .output(WebhookList)
    .query(async ({ ctx, input }) => {
      const page = await listWebhooks(ctx.db, teamOf(ctx).team.id, input);
      return {
        meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
        count: page.total,
        webhooks: page.rows.map((row) => webhookView(row, ctx.baseUrl)),
      };
    }),

  create: procedure
    .meta({
      create: "secret",
      permission: "team:webhook:create",
      openapi: {
        method: "POST",
        path: "/api/v1/teams/{teamId}/webhooks",
        tags: [TAG],
        summary: "Create a webhook (owners)",
        description:
          "The reply carries the signing `secret`, shown this once. The URL must be http(s) and its host must resolve to public addresses only (400 `webhook_url_refused` otherwise) unless the operator allows the host in `WEBHOOK_ALLOWED_HOSTS`. No request is sent now. `eventTypes` empty (or `*`): every event type. A team has at most 25 hooks (409 `webhook_limit`). Audit event `team.webhook.created`.",
      },
      errors: [409],
    })
    .input(CreateWebhookInput)
    .output(WebhookWithSecret)
    .mutation(async ({ ctx, input }) => {
      await assertUrlAllowed(input.url, allowedHosts(ctx));
      const secret = newSecret();
      const teamId = teamOf(ctx).team.id;
      const row = await ctx.db.transaction().execute(async (trx) => {
        await assertRoomForHook(trx, teamId);
        const created = await insertWebhook(trx, { ...input, teamId }, (id) =>
          sealWebhookSecret(ctx.tokenSecret, id, secret),
        );
        await recordHookEvent(trx, "created", ctx, created);
        return created;
      });
      return { ...webhookView(row, ctx.baseUrl), secret };
    }),

  get: procedure
    .meta({
      permission: "team:webhook:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/webhooks/{hookId}",
        tags: [TAG],
        summary: "A webhook (owners)",
        description: "Its secret is never shown again.",
      },
    })
    .input(WebhookIdInput)
    .output(Webhook)
    .query(async ({ ctx, input }) => webhookView(await hookOf(ctx, input.hookId), ctx.baseUrl)),

  update: procedure
    .meta({
      permission: "team:webhook:edit",
      openapi: {
        method: "PUT",
        path: "/api/v1/teams/{teamId}/webhooks/{hookId}",
        tags: [TAG],
        summary: "Change a webhook's URL, event types or whether it is active (owners)",
        description:
          "A new URL is checked as at creation (400 `webhook_url_refused`). An inactive hook queues nothing; deliveries already queued are still sent. Audit event `team.webhook.updated`.",
      },
    })
    .input(UpdateWebhookInput)
    .output(Webhook)
    .mutation(async ({ ctx, input }) => {
      const hook = await hookOf(ctx, input.hookId);
      if (input.url !== undefined) await assertUrlAllowed(input.url, allowedHosts(ctx));
      const row = await ctx.db.transaction().execute(async (trx) => {
        const changed = await updateWebhook(trx, hook.id, input);
        await recordHookEvent(trx, "updated", ctx, changed);
        return changed;
      });
      return webhookView(row, ctx.baseUrl);
    }),

  rotateSecret: procedure
    .meta({
      permission: "team:webhook:edit",
      openapi: {
        method: "POST",
        path: "/api/v1/teams/{teamId}/webhooks/{hookId}/rotate-secret",
        tags: [TAG],
        summary: "Give a webhook a new signing secret (owners)",
        description:
          "The reply carries the new `secret`, shown this once; every delivery from now on, retries included, is signed with it. Audit event `team.webhook.updated`.",
      },
    })
    .input(WebhookIdInput)
    .output(WebhookWithSecret)
    .mutation(async ({ ctx, input }) => {
      const hook = await hookOf(ctx, input.hookId);
      const secret = newSecret();
      const row = await ctx.db.transaction().execute(async (trx) => {
        const sealed = sealWebhookSecret(ctx.tokenSecret, hook.id, secret);
        const changed = await updateWebhook(trx, hook.id, { secret: sealed });
        await recordHookEvent(trx, "updated", ctx, changed, { secretRotated: true });
        return changed;
      });
      return { ...webhookView(row, ctx.baseUrl), secret };
    }),

  delete: procedure
    .meta({
      permission: "team:webhook:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/teams/{teamId}/webhooks/{hookId}",
        tags: [TAG],
        summary: "Delete a webhook and its delivery log (owners)",
        description: "Deliveries not yet sent are dropped. Audit event `team.webhook.deleted`.",
      },
    })
    .input(WebhookIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const hook = await hookOf(ctx, input.hookId);
      await ctx.db.transaction().execute(async (trx) => {
        await deleteWebhook(trx, hook.id);
        await recordHookEvent(trx, "deleted", ctx, hook);
      });
      return { status: "okay" as const };
    }),
};

// What goes in the delivery queue: the events consumer (run by the sequencer in its numbering
// transaction, so each event is queued once for each hook that hears it, whichever process numbers
// it) and the envelope every delivery carries — the stream's shape of an event.
import {
  activeWebhooksOf,
  enqueueDeliveries,
  type EventConsumer,
  type EventRecord,
  type NewDelivery,
  stageWebhooksOf,
} from "@flowplane/db";

/** An event as integrators see it (docs/webhooks.md, "The envelope"). */
export function envelopeOf(event: EventRecord): Record<string, unknown> {
  return {
    id: event.seq,
    type: event.type,
    teamId: event.teamId,
    createdAt: event.createdAt.toISOString(),
    resource: { type: event.entityType, id: event.entityId },
    actor: event.actorId ? { id: event.actorId } : null,
    data: event.data,
  };
}

/** Whether a hook's list of types takes this one: an empty list, or `*`, takes every type. */
export function hears(eventTypes: readonly string[], type: string): boolean {
  return eventTypes.length === 0 || eventTypes.includes("*") || eventTypes.includes(type);
}

/** A deploy's outcome: the stage it went into may name a hook that hears it whatever its types. */
const DEPLOY_OUTCOMES = new Set([
  "application.pipeline.stage-deployed",
  "application.pipeline.stage-deploy-failed",
]);

/** The stage a deploy outcome went into (its body's `targetStage`), if the event is one. */
function targetStageOf(event: EventRecord): string | undefined {
  if (!DEPLOY_OUTCOMES.has(event.type)) return undefined;
  const id = (event.data.targetStage as { id?: unknown } | undefined)?.id;
  return typeof id === "string" ? id : undefined;
}

export const queueDeliveries: EventConsumer = async (trx, events) => {
  const teamIds = [...new Set(events.map((e) => e.teamId).filter((id): id is string => !!id))];
  const stageIds = [...new Set(events.map(targetStageOf).filter((id): id is string => !!id))];
  const hooks = await activeWebhooksOf(trx, teamIds);
  const stageHooks = await stageWebhooksOf(trx, stageIds);
  if (hooks.length === 0) return;
  const deliveries: NewDelivery[] = [];
  for (const event of events) {
    const stageId = targetStageOf(event);
    // A hook hears an event once, by its types or as the hook of the stage deployed into.
    const named = new Set(
      stageHooks
        .filter((s) => s.stage_id === stageId && s.team_id === event.teamId)
        .map((s) => s.webhook_id),
    );
    for (const hook of hooks) {
      if (hook.team_id !== event.teamId) continue;
      if (!hears(hook.event_types, event.type) && !named.has(hook.id)) continue;
      deliveries.push({
        webhookId: hook.id,
        teamId: hook.team_id,
        eventId: event.seq,
        eventType: event.type,
        payload: envelopeOf(event),
      });
    }
  }
  await enqueueDeliveries(trx, deliveries);
};

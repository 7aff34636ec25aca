// Writes an event that is not an audit entry (every audit entry is one already: the migration's
// trigger copies it). Callers pass the transaction of the change when there is one, so that the
// event exists exactly when its change does; the sequencer gives it its public id once committed.
import type { Kysely } from "kysely";
import type { Database } from "../schema";

export interface NewEvent {
  /** `device.online`, `project.crashed`: the catalogue is the contract's (events.ts). */
  type: string;
  /** The team whose stream carries it. */
  teamId: string | null;
  /** What it is about: `device`, `project` (an instance), `application`, `team`, `user`. */
  entity: { type: string; id: string | null };
  /** Who acted; absent: the platform. */
  actor?: { userId: string; tokenId: string | null };
  /** Never a secret: names and ids, states and reasons. */
  data?: Record<string, unknown>;
}

export async function recordEvent(db: Kysely<Database>, event: NewEvent): Promise<void> {
  await db
    .insertInto("events")
    .values({
      type: event.type,
      team_id: event.teamId,
      entity_type: event.entity.type,
      entity_id: event.entity.id,
      actor_id: event.actor?.userId ?? null,
      token_id: event.actor?.tokenId ?? null,
      data: JSON.stringify(event.data ?? {}),
    })
    .execute();
  eventRecorded();
}

type Listener = () => void;
const listeners = new Set<Listener>();

/**
 * Hears that an event was written (by recordEvent; audit entries are heard by onAuditWritten), so
 * that a sequencer runs soon rather than at its next tick. Returns the unsubscribe.
 */
export function onEventRecorded(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function eventRecorded() {
  for (const listener of listeners) listener();
}

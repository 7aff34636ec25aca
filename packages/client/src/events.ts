// A team's events (GET /api/v1/teams/{teamId}/events, docs/events.md): a page of them as JSON, and
// the live stream of Server-Sent Events read with fetch (a browser's EventSource cannot send a
// bearer token) and parsed by eventsource-parser, resumed after the last event seen.
import type { EventList, TeamEvent } from "@flowplane/contract";
import { createParser } from "eventsource-parser";
import { type FlowplaneClientOptions, trimmed } from "./client";
import { refusalOf } from "./errors";

export type { EventList, TeamEvent };

export interface TeamEventsQuery {
  /** Only these types. */
  types?: string[];
  resourceType?: string;
  resourceId?: string;
}

type Options = Omit<FlowplaneClientOptions, "batch">;

function eventsUrl(options: Options, teamId: string, query: Record<string, string | undefined>) {
  const url = new URL(`${trimmed(options.url)}/api/v1/teams/${encodeURIComponent(teamId)}/events`);
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  return url.toString();
}

const filterQuery = (query: TeamEventsQuery) => ({
  type: query.types?.length ? query.types.join(",") : undefined,
  resourceType: query.resourceType,
  resourceId: query.resourceId,
});

/** A page of the team's events, oldest first, after `cursor`. */
export async function listTeamEvents(
  options: Options,
  teamId: string,
  query: TeamEventsQuery & { limit?: number; cursor?: string } = {},
): Promise<EventList> {
  const url = eventsUrl(options, teamId, {
    ...filterQuery(query),
    limit: query.limit === undefined ? undefined : String(query.limit),
    cursor: query.cursor,
  });
  const response = await (options.fetch ?? globalThis.fetch)(url, {
    headers: { authorization: `Bearer ${options.token}`, accept: "application/json" },
  });
  if (response.status !== 200) throw await refusalOf(response);
  return (await response.json()) as EventList;
}

export interface FollowEventsOptions {
  /** Resume after this event (the server's `Last-Event-ID`); none: only new events. */
  after?: string;
  /** Stops the stream quietly. */
  signal?: AbortSignal;
}

/**
 * The team's events as the server streams them, until the stream ends (the caller's access ended,
 * the reader fell too far behind, the server closed) or `signal` aborts. A refusal before the
 * stream starts throws FlowplaneClientError with the API's code (`events_expired`: `after` is
 * behind retention).
 */
export async function* followTeamEvents(
  options: Options,
  teamId: string,
  query: TeamEventsQuery = {},
  follow: FollowEventsOptions = {},
): AsyncGenerator<TeamEvent> {
  const response = await (options.fetch ?? globalThis.fetch)(
    eventsUrl(options, teamId, filterQuery(query)),
    {
      headers: {
        authorization: `Bearer ${options.token}`,
        accept: "text/event-stream",
        ...(follow.after !== undefined && { "last-event-id": follow.after }),
      },
      signal: follow.signal,
    },
  );
  if (response.status !== 200 || !response.body) throw await refusalOf(response);
  const ready: TeamEvent[] = [];
  const parser = createParser({
    onEvent: (message) => ready.push(JSON.parse(message.data) as TeamEvent),
  });
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      while (ready.length > 0) yield ready.shift()!;
    }
  } catch (error) {
    if (follow.signal?.aborted) return;
    throw error;
  } finally {
    reader.cancel().catch(() => {});
  }
}

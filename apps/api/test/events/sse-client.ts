// A reader of a team's event stream for the tests: plain fetch reading the body, parsed by
// eventsource-parser, every event kept in the order it came; it waits for what a test needs.
import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface StreamedEvent {
  id: string;
  type: string;
  teamId: string;
  resource: { type: string; id: string | null };
  actor: { id: string } | null;
  data: Record<string, any>;
}

export interface SseReader {
  status: number;
  events: StreamedEvent[];
  /** Resolves once the server ended the stream. */
  ended: Promise<void>;
  /** The events once `done` holds of them (up to `timeoutMs`). */
  until(done: (events: StreamedEvent[]) => boolean, timeoutMs?: number): Promise<StreamedEvent[]>;
  close(): void;
}

export async function openStream(
  url: string,
  token: string,
  options: { query?: string; lastEventId?: string } = {},
): Promise<SseReader> {
  const controller = new AbortController();
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    accept: "text/event-stream",
  };
  if (options.lastEventId) headers["last-event-id"] = options.lastEventId;
  const response = await fetch(url + (options.query ? `?${options.query}` : ""), {
    headers,
    signal: controller.signal,
  });
  const events: StreamedEvent[] = [];
  const waiters = new Set<() => void>();
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      const event = JSON.parse(message.data) as StreamedEvent;
      if (event.id !== message.id || event.type !== message.event) {
        throw new Error(`id or event line differ from the data: ${JSON.stringify(message)}`);
      }
      events.push(event);
      for (const wake of waiters) wake();
    },
  });
  let opened: () => void = () => {};
  const open = new Promise<void>((resolve) => (opened = resolve));
  const ended = (async () => {
    if (!response.body || response.status !== 200) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body) {
        const text = decoder.decode(chunk as Uint8Array, { stream: true });
        if (text.includes(": open")) opened();
        parser.feed(text);
      }
    } catch {
      // Aborted by the test.
    }
  })().finally(() => {
    opened();
    for (const wake of waiters) wake();
  });
  // The stream has started (its cursor is set) once its first comment came.
  if (response.status === 200) await open;
  let finished = false;
  void ended.then(() => (finished = true));
  return {
    status: response.status,
    events,
    ended,
    async until(done, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(events)) {
        if (finished)
          throw new Error(`the stream ended: ${JSON.stringify(events.map((e) => e.type))}`);
        if (Date.now() > deadline) {
          throw new Error(`not seen in time: ${JSON.stringify(events.map((e) => e.type))}`);
        }
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, 200);
          waiters.add(wake);
        });
      }
      return events;
    },
    close: () => controller.abort(),
  };
}

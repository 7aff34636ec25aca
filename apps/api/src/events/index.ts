// The events area: what integrators hear of the platform — every audit entry and what the
// platform tells that is not audited (docs/events.md). Its runner numbers events as they commit
// and hands them to the consumers other areas add (webhooks, notifications); its route streams
// them to integrators.
import { pruneEvents } from "@flowplane/db";
import type { Area } from "../plugins/area";
import { EventRunner } from "./runner";
import { EVENTS_DOC, eventStreamRoute } from "./stream";

declare module "../plugins/area" {
  interface AppOptions {
    /** How often events written by another process are looked for (default 250 ms). */
    eventTickMs?: number;
    /** How long events are kept for streams to resume (default 7 days). */
    eventRetentionHours?: number;
  }
}

declare module "../core/trpc" {
  interface Context {
    /** The events' runner (events/runner.ts). */
    events?: EventRunner;
  }
}

export const events = {
  procedures: {},
  async start(app, { db, options }) {
    const runner = new EventRunner(db, app.log, options.eventTickMs ?? 250);
    app.addHook("onListen", async () => runner.start());
    app.addHook("onClose", async () => runner.close());
    return { events: runner };
  },
  /** The team's events, streamed or paged (events/stream.ts). */
  api: async (app, platform) => eventStreamRoute(app, platform, platform.options.eventStream),
  docs: [EVENTS_DOC],
  async sweep({ db, options }) {
    const hours = options.eventRetentionHours ?? 24 * 7;
    await pruneEvents(db, new Date(Date.now() - hours * 3_600_000));
  },
} satisfies Area;

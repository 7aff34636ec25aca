// The notifications area: a person's inbox (FlowFuse's `/api/v1/user/notifications`), fed by the
// events that concern them (consumer.ts, in the events' numbering transaction), the page that
// lists them (the count of unread ones is in every page's bar), and the sweep that bounds them.
import { pruneNotifications } from "@flowplane/db";
import { router } from "../core/trpc";
import type { Area } from "../plugins/area";
import { notifyOfEvents } from "./consumer";
import { notificationPages } from "./pages/notifications";
import { notificationProcedures } from "./procedures";

declare module "../plugins/area" {
  interface AppOptions {
    /** How long read notifications are kept (default 30 days). */
    notificationReadRetentionHours?: number;
    /** The most notifications a person keeps, read or not (default 1000). */
    notificationsKept?: number;
  }
}

export const notifications = {
  procedures: { notifications: router(notificationProcedures) },
  pages: () => notificationPages,
  /** After the events area: its runner is in the services. */
  async start(_app, { services }) {
    services.events?.addConsumer(notifyOfEvents);
  },
  async sweep({ db, options }, log) {
    const hours = options.notificationReadRetentionHours ?? 24 * 30;
    const removed = await pruneNotifications(
      db,
      new Date(Date.now() - hours * 3_600_000),
      options.notificationsKept ?? 1000,
    );
    if (removed > 0) log.info({ count: removed }, "deleted old notifications");
  },
} satisfies Area;

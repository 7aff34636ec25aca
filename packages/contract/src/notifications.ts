// Notifications: a person's inbox, as FlowFuse's `/api/v1/user/notifications` (its Notification:
// `id`, `type`, `createdAt`, `read`, `data`), fed by the platform's events that concern them
// (docs/notifications.md).
import { z } from "zod";
import { Id, ListMeta, Timestamp } from "./common";

/** What a notification tells; `team-invite` and `instance-crashed` are FlowFuse's names. */
export const NOTIFICATION_TYPES = [
  "team-invite",
  "device-offline",
  "device-crashed",
  "instance-crashed",
  "pipeline-deploy-failed",
  "rollout-rolled-back",
  "rollout-failed",
] as const;

export const NotificationData = z
  .looseObject({
    title: z.string().describe("One line, for a list"),
    message: z.string().describe("A sentence naming the team and what happened"),
    url: z.string().describe("The console page it concerns (a path on this platform)"),
    team: z.object({ id: Id, name: z.string() }).optional(),
  })
  .describe("Built from the event: the names it carried, never a secret")
  .meta({ id: "NotificationData" });

export const Notification = z
  .object({
    id: Id,
    type: z.string().describe(`One of ${NOTIFICATION_TYPES.map((t) => `\`${t}\``).join(", ")}`),
    createdAt: Timestamp,
    read: z.boolean(),
    data: NotificationData,
  })
  .meta({ id: "Notification" });
export type Notification = z.infer<typeof Notification>;

export const NotificationList = z
  .object({
    meta: ListMeta,
    count: z.number().int().describe("All your notifications"),
    unread: z
      .number()
      .int()
      .describe("Those not read yet (Flowplane's; FlowFuse counts them itself)"),
    notifications: z.array(Notification),
  })
  .meta({ id: "NotificationList" });
export type NotificationList = z.infer<typeof NotificationList>;

export const ListNotificationsInput = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50).describe("1–100, default 50"),
  cursor: Id.optional().describe("The `meta.next_cursor` of the previous page"),
});

export const MarkNotificationsInput = z.strictObject({
  ids: z
    .array(Id)
    .min(1)
    .max(1000)
    .describe("Your notifications' ids (1–1000); others' are ignored"),
  read: z.boolean(),
});

export const NotificationIdInput = z.strictObject({ notificationId: Id });

export const MarkNotificationInput = z.strictObject({ notificationId: Id, read: z.boolean() });

// A person's notifications, FlowFuse's `/api/v1/user/notifications`: their own only (another's id
// is 404, as one that never was). A read-only token may list them (FlowFuse: not even that) but
// not mark or delete them.
import {
  ListNotificationsInput,
  MarkNotificationInput,
  MarkNotificationsInput,
  type Notification,
  NotificationIdInput,
  NotificationList,
  Status,
} from "@flowplane/contract";
import {
  deleteNotification,
  listNotifications,
  markNotifications,
  type NotificationRow,
  notificationsNotOwned,
} from "@flowplane/db";
import { invalidRequest, notFound } from "../core/errors";
import { type Context, procedure } from "../core/trpc";

const TAG = "User";
const PATH = "/api/v1/user/notifications";

export function notificationView(row: NotificationRow): Notification {
  return {
    id: row.id,
    type: row.type,
    createdAt: row.created_at.toISOString(),
    read: row.read,
    data: (typeof row.data === "string" ? JSON.parse(row.data) : row.data) as Notification["data"],
  };
}

/** A page of the caller's notifications, with their counts. */
export async function notificationList(
  ctx: Pick<Context, "db" | "auth">,
  input: { limit: number; cursor?: string },
): Promise<NotificationList> {
  const page = await listNotifications(ctx.db, ctx.auth.userId, input);
  return {
    meta: page.nextCursor ? { next_cursor: page.nextCursor } : {},
    count: page.total,
    unread: page.unread,
    notifications: page.rows.map(notificationView),
  };
}

export const notificationProcedures = {
  list: procedure
    .meta({
      permission: "user:notification:list",
      openapi: {
        method: "GET",
        path: PATH,
        tags: [TAG],
        summary: "Your notifications",
        description:
          "Newest first, a page at a time (`meta.next_cursor`); `count` is all of them, `unread` those not read yet. What notifies whom is in docs/notifications.md. Unlike FlowFuse, a read-only token may list them.",
      },
    })
    .input(ListNotificationsInput)
    .output(NotificationList)
    .query(({ ctx, input }) => notificationList(ctx, input)),

  markAll: procedure
    .meta({
      permission: "user:notification:edit",
      openapi: {
        method: "PUT",
        path: PATH,
        tags: [TAG],
        summary: "Mark notifications read or unread",
        description:
          "Answers the first page of your notifications, as FlowFuse does. An id that is not one of your notifications (another person's, or none) is 400 `invalid_request` naming it (`ids.<index>`), and none is marked (FlowFuse ignores it).",
      },
    })
    .input(MarkNotificationsInput)
    .output(NotificationList)
    .mutation(async ({ ctx, input }) => {
      const unknown = await notificationsNotOwned(ctx.db, ctx.auth.userId, input.ids);
      if (unknown.length > 0) {
        const fields = input.ids.flatMap((id, index) =>
          unknown.includes(id)
            ? [{ path: `ids.${index}`, message: "Not one of your notifications" }]
            : [],
        );
        throw invalidRequest(
          `Invalid request: ids: not your notifications: ${unknown.join(", ")}`,
          fields,
        );
      }
      await markNotifications(ctx.db, ctx.auth.userId, input.ids, input.read);
      return notificationList(ctx, { limit: 50 });
    }),

  mark: procedure
    .meta({
      permission: "user:notification:edit",
      openapi: {
        method: "PUT",
        path: `${PATH}/{notificationId}`,
        tags: [TAG],
        summary: "Mark a notification read or unread",
        description: "Another person's notification is 404.",
      },
    })
    .input(MarkNotificationInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const marked = await markNotifications(
        ctx.db,
        ctx.auth.userId,
        [input.notificationId],
        input.read,
      );
      if (marked === 0) throw notFound();
      return { status: "okay" as const };
    }),

  delete: procedure
    .meta({
      permission: "user:notification:edit",
      openapi: {
        method: "DELETE",
        path: `${PATH}/{notificationId}`,
        tags: [TAG],
        summary: "Delete a notification",
        description: "Another person's notification is 404.",
      },
    })
    .input(NotificationIdInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      if (!(await deleteNotification(ctx.db, ctx.auth.userId, input.notificationId))) {
        throw notFound();
      }
      return { status: "okay" as const };
    }),
};

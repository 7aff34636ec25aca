// A person's notifications page (GET /notifications): newest first, paged, each with its message
// and a link to the page it concerns, and the forms that mark one read or unread, delete one, or
// mark every one shown read. Everything is the API's own procedures, called as the signed-in user;
// the pages plugin refuses a form posted from another site.
import type { FastifyInstance } from "fastify";
import { router } from "../../core/trpc";
import { field, fields } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage, signedIn } from "../../pages/page";
import { pageAt, pageLinks } from "../../pages/paging";
import { pageRoute } from "../../pages/render";
import { notificationProcedures } from "../procedures";

// The same procedures under the same names as the API's router (rate limits count by them).
const pageProcedures = router({ notifications: router(notificationProcedures) });

const PATH = "/notifications";
const PAGE_SIZE = 20;
const NOTICES = {
  read: "Marked read.",
  unread: "Marked unread.",
  deleted: "Deleted.",
  "all-read": "Marked every one shown read.",
};

/** Back to the page the form was on (its `from` field: where on this list only), with a notice. */
function backTo(body: unknown, done: keyof typeof NOTICES) {
  const from = field(body, "from");
  const query = from?.startsWith(`${PATH}?`)
    ? new URLSearchParams(from.slice(PATH.length + 1))
    : undefined;
  const kept = new URLSearchParams();
  for (const name of ["cursor", "back"]) {
    const value = query?.get(name);
    if (value) kept.set(name, value);
  }
  kept.set("done", done);
  return `${PATH}?${kept.toString()}`;
}

export function notificationPages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: PATH }) };
  const callerOf = (request: Parameters<PageDeps["context"]>[0]) =>
    pageProcedures.createCaller(deps.context(request));

  app.get(PATH, route, async (request, reply) => {
    const at = pageAt(request.query);
    const page = await callerOf(request).notifications.list({
      limit: PAGE_SIZE,
      cursor: at.cursor,
    });
    const links = pageLinks(PATH, {}, at, page.meta.next_cursor);
    // What the count in the bar shows is what this page read.
    request.unreadNotifications = page.unread;
    return sendPage(deps, request, reply, "notifications/pages/notifications", {
      title: "Notifications",
      page,
      here: request.url,
      notice: noticeOf(request, NOTICES),
      pager: { label: "Notifications pages", ...links },
    });
  });

  app.post<{ Params: { notificationId: string } }>(
    `${PATH}/:notificationId/read`,
    route,
    async (request, reply) => {
      const read = field(request.body, "read") !== "false";
      const { notificationId } = request.params;
      await callerOf(request).notifications.mark({ notificationId, read });
      return reply.redirect(backTo(request.body, read ? "read" : "unread"), 303);
    },
  );

  app.post<{ Params: { notificationId: string } }>(
    `${PATH}/:notificationId/delete`,
    route,
    async (request, reply) => {
      const { notificationId } = request.params;
      await callerOf(request).notifications.delete({ notificationId });
      return reply.redirect(backTo(request.body, "deleted"), 303);
    },
  );

  app.post(`${PATH}/read`, route, async (request, reply) => {
    const ids = fields(request.body, "id");
    if (ids.length > 0) await callerOf(request).notifications.markAll({ ids, read: true });
    return reply.redirect(backTo(request.body, "all-read"), 303);
  });
}

// Every user, as administrators manage them: GET /admin/users (searchable, a page at a time), and
// the forms that create a user, suspend or restore one, grant or take the administrator's rights,
// expire a password (the next sign-in must choose a new one) and delete a user. Each calls the
// API's own procedure (`users.*`): its rules (the last active administrator stays), its messages.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage } from "../../pages/page";
import { adminRoute, type AdminCaller, queryOf, sendRefusal } from "./shared";

const PAGE_SIZE = 50;

const NOTICES: Record<string, string> = {
  created: "The user is created.",
  suspended: "The user is suspended: they cannot sign in, and their tokens fail.",
  unsuspended: "The user may sign in again.",
  admin: "The user is an administrator.",
  unadmin: "The user is no longer an administrator.",
  expired: "The user's password is expired: their next sign-in must choose a new one.",
  deleted: "The user is deleted.",
};

/** Each action on one user: the change it asks of `users.update`, and its notice. */
const ACTIONS = {
  suspend: { change: { suspended: true }, done: "suspended" },
  unsuspend: { change: { suspended: false }, done: "unsuspended" },
  "make-admin": { change: { admin: true }, done: "admin" },
  "remove-admin": { change: { admin: false }, done: "unadmin" },
  "expire-password": { change: { password_expired: true }, done: "expired" },
} as const;

type UserParams = { userId: string };

interface UsersState {
  create?: { username: string; name: string; email: string; admin: boolean };
  createError?: FormError;
  userError?: FormError;
}

const EMPTY_CREATE = { username: "", name: "", email: "", admin: false };

export function userPages(app: FastifyInstance, deps: PageDeps) {
  async function renderUsers(
    request: FastifyRequest,
    reply: FastifyReply,
    caller: AdminCaller,
    state: UsersState = {},
  ) {
    const query = queryOf(request, "q");
    const cursor = queryOf(request, "cursor");
    let list;
    try {
      list = await caller.users.all({ query, cursor, limit: PAGE_SIZE });
    } catch (error) {
      return sendRefusal(deps, request, reply, error);
    }
    const next = list.meta.next_cursor;
    const failed = state.createError ?? state.userError;
    return sendPage(
      deps,
      request,
      reply,
      "platform/pages/users",
      {
        title: "Users · Administration",
        tab: "users",
        me: request.auth!.userId,
        users: list.users,
        count: list.count,
        query: query ?? "",
        nextHref: next
          ? `/admin/users?${new URLSearchParams({ ...(query && { q: query }), cursor: next })}`
          : undefined,
        create: state.create ?? EMPTY_CREATE,
        createError: state.createError,
        userError: state.userError,
        notice: failed ? undefined : noticeOf(request, NOTICES),
      },
      failed?.status ?? 200,
    );
  }

  adminRoute(app, deps, "GET", "/admin/users", (request, reply, caller) =>
    renderUsers(request, reply, caller),
  );

  adminRoute(app, deps, "POST", "/admin/users", async (request, reply, caller) => {
    const create = {
      username: field(request.body, "username") ?? "",
      name: field(request.body, "name") ?? "",
      email: field(request.body, "email") ?? "",
      admin: field(request.body, "admin") !== undefined,
    };
    try {
      await caller.users.create({
        username: create.username,
        name: create.name,
        ...(create.email !== "" && { email: create.email }),
        password: field(request.body, "password") ?? "",
        isAdmin: create.admin,
      });
    } catch (error) {
      return renderUsers(request, reply, caller, {
        create,
        createError: formError(request, reply, error),
      });
    }
    return reply.redirect("/admin/users?done=created", 303);
  });

  for (const [action, { change, done }] of Object.entries(ACTIONS)) {
    adminRoute<UserParams>(
      app,
      deps,
      "POST",
      `/admin/users/:userId/${action}`,
      async (request, reply, caller) => {
        try {
          await caller.users.update({ userId: request.params.userId, ...change });
        } catch (error) {
          return renderUsers(request, reply, caller, {
            userError: formError(request, reply, error),
          });
        }
        return reply.redirect(`/admin/users?done=${done}`, 303);
      },
    );
  }

  adminRoute<UserParams>(
    app,
    deps,
    "POST",
    "/admin/users/:userId/delete",
    async (request, reply, caller) => {
      const { userId } = request.params;
      if (field(request.body, "confirmed") !== "yes") {
        // No script ran to ask: ask on a page.
        let user;
        try {
          user = await caller.users.byId({ userId });
        } catch (error) {
          return sendRefusal(deps, request, reply, error);
        }
        return sendPage(deps, request, reply, "platform/pages/confirm", {
          title: "Delete a user",
          question: `Delete ${user.name} (${user.username})? Their tokens and sessions go, and the teams they own alone.`,
          action: `/admin/users/${user.id}/delete`,
          button: "Delete",
          cancel: "/admin/users",
        });
      }
      try {
        await caller.users.delete({ userId });
      } catch (error) {
        return renderUsers(request, reply, caller, { userError: formError(request, reply, error) });
      }
      return reply.redirect("/admin/users?done=deleted", 303);
    },
  );
}

// GET/POST /sign-in: a plain form (works without script) that checks the credentials and starts a
// session as POST /account/login does, then goes on to `next` — through the new-password page first
// when the password has expired. GET /sign-out: a page with the sign-out button; POST /sign-out: the
// button's form (no script needed), which ends the session and goes back to the sign-in page.
import { LoginInput } from "@flowplane/contract";
import type { FastifyInstance } from "fastify";
import { validationError } from "../../core/errors";
import { checkCredentials, endSession, startSession } from "../sessions";
import { field, formError } from "../../pages/forms";
import { safeNext, withNext } from "../../pages/next";
import { sendPage } from "../../pages/page";
import type { AccountPageDeps as PageDeps } from "./caller";
import { pageRoute, pageRouteWithFormsTo } from "../../pages/render";

export function signInPages(app: FastifyInstance, deps: PageDeps) {
  // Where the first password is, while it is still the administrator's.
  const firstStart = async () => (await deps.account.initialPassword?.pending()) ?? false;

  // An editor's sign-in goes on to the editor's host after the form's post (next=/account/authorize).
  const signInPage = pageRouteWithFormsTo([deps.editorHosts.cspSource]);

  app.get("/sign-in", signInPage, async (request, reply) => {
    const next = safeNext((request.query as { next?: unknown }).next);
    const auth = request.auth;
    if (auth) {
      return reply.redirect(
        auth.passwordExpired ? withNext("/settings/password", next) : next,
        303,
      );
    }
    return sendPage(deps, request, reply, "accounts/pages/sign-in", {
      title: "Sign in",
      next,
      username: "",
      firstStart: await firstStart(),
    });
  });

  // The same limits as POST /account/login (checkCredentials): attempts per client address,
  // failures per account.
  app.post("/sign-in", signInPage, async (request, reply) => {
    const next = safeNext(field(request.body, "next"));
    const username = field(request.body, "username") ?? "";
    try {
      const parsed = LoginInput.safeParse({
        username: username.trim(),
        password: field(request.body, "password") ?? "",
      });
      if (!parsed.success) throw validationError(parsed.error);
      const { username: login, password } = parsed.data;
      const user = await checkCredentials(deps.account, request, login, password);
      await startSession(reply, deps.account, user);
      return reply.redirect(
        user.password_expired ? withNext("/settings/password", next) : next,
        303,
      );
    } catch (error) {
      const failed = formError(request, reply, error);
      // A blank field is the same mistake as a wrong one, said plainly.
      if (failed.code === "invalid_request") failed.message = "Enter your username and password.";
      return sendPage(
        deps,
        request,
        reply,
        "accounts/pages/sign-in",
        { title: "Sign in", next, username, error: failed, firstStart: await firstStart() },
        failed.status,
      );
    }
  });

  app.get("/sign-out", pageRoute, async (request, reply) => {
    if (!request.auth) return reply.redirect("/sign-in", 303);
    return sendPage(deps, request, reply, "accounts/pages/sign-out", { title: "Sign out" });
  });

  app.post("/sign-out", pageRoute, async (request, reply) => {
    await endSession(reply, deps.account, request.auth);
    return reply.redirect("/sign-in", 303);
  });
}

// The signed-in user's settings: Profile (name, email, password), Security (personal access
// tokens), and the forced new-password page. Every change is a plain form POST that calls the
// API's own procedure as the signed-in user, so permissions, validation and audit are the API's.
import type { CreateTokenInput } from "@flowplane/contract";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { field, fields, type FormError, formError } from "../../pages/forms";
import { safeNext } from "../../pages/next";
import { noticeOf, sendFailure, sendPage, signedIn } from "../../pages/page";
import { signedInJustNow } from "../user";
import { type AccountPageDeps as PageDeps, callerOf } from "./caller";
import { pageRoute, pageRouteWithFormsTo } from "../../pages/render";

/** Messages after a redirect, by a fixed key (a query string never puts text on a page). */
const NOTICES: Record<string, string> = {
  profile: "Your profile is saved.",
  password: "Your password is changed. Your other sessions have been signed out.",
  revoked: "The token is revoked.",
};

const notice = (request: FastifyRequest) => noticeOf(request, NOTICES);

/** Where a failure on these pages leads back to. */
const BACK = { href: "/settings/security", label: "Back to your settings" };

/** A date input's value ("2026-12-31") as the end of that day in UTC; anything else as given. */
const endOfDay = (date: string) => (/^\d{4}-\d{2}-\d{2}$/.test(date) ? `${date}T23:59:59Z` : date);

interface TokenForm {
  name: string;
  expiresAt: string;
  readOnly: boolean;
  teamIds: string[];
  adminOptIn: boolean;
}

const EMPTY_TOKEN_FORM: TokenForm = {
  name: "",
  expiresAt: "",
  readOnly: false,
  teamIds: [],
  adminOptIn: false,
};

/** Checks the new password was typed the same twice, before asking the API. */
function repeatMismatch(body: unknown): FormError | undefined {
  if (field(body, "password") === field(body, "password_repeat")) return undefined;
  return {
    status: 400,
    code: "invalid_request",
    message: "The new passwords do not match.",
    fields: { password_repeat: "Does not match the new password" },
    reasons: [],
  };
}

/** Changes the password as the form asks; the error to show, or undefined when it is changed. */
async function changePassword(
  deps: PageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FormError | undefined> {
  const mismatch = repeatMismatch(request.body);
  if (mismatch) return mismatch;
  try {
    // Left out by the forced change right after signing in, which does not ask for it again.
    const old = field(request.body, "old_password");
    await callerOf(deps, request).user.changePassword({
      ...(old !== undefined && { old_password: old }),
      password: field(request.body, "password") ?? "",
    });
    return undefined;
  } catch (error) {
    return formError(request, reply, error);
  }
}

export function settingsPages(app: FastifyInstance, deps: PageDeps) {
  // --- Choose a new password (the only page open while the password is expired)
  // Its post may go on to an editor's sign-in (next=/account/authorize) and the editor's host.
  const passwordPage = {
    ...pageRouteWithFormsTo([deps.editorHosts.cspSource]),
    preHandler: signedIn({ page: "/settings/password", allowExpiredPassword: true }),
  };

  // The current password is asked for only when it was not given a moment ago, at sign-in.
  const askCurrent = async (request: FastifyRequest) =>
    !(await signedInJustNow(deps.context(request)));

  app.get("/settings/password", passwordPage, async (request, reply) => {
    const next = safeNext((request.query as { next?: unknown }).next);
    return sendPage(deps, request, reply, "accounts/pages/password", {
      title: "Choose a new password",
      next,
      askCurrent: await askCurrent(request),
    });
  });

  app.post("/settings/password", passwordPage, async (request, reply) => {
    const next = safeNext(field(request.body, "next"));
    const failed = await changePassword(deps, request, reply);
    if (!failed) return reply.redirect(next, 303);
    return sendPage(
      deps,
      request,
      reply,
      "accounts/pages/password",
      {
        title: "Choose a new password",
        next,
        error: failed,
        askCurrent: await askCurrent(request),
      },
      failed.status,
    );
  });

  // --- Profile
  const profilePage = { ...pageRoute, preHandler: signedIn({ page: "/settings/profile" }) };

  async function renderProfile(
    request: FastifyRequest,
    reply: FastifyReply,
    state: {
      values?: { name: string; email: string };
      profileError?: FormError;
      passwordError?: FormError;
    },
  ) {
    const me = await callerOf(deps, request).user.me();
    const failed = state.profileError ?? state.passwordError;
    return sendPage(
      deps,
      request,
      reply,
      "accounts/pages/profile",
      {
        title: "Profile",
        me,
        values: state.values ?? { name: me.name, email: me.email ?? "" },
        profileError: state.profileError,
        passwordError: state.passwordError,
        notice: failed ? undefined : notice(request),
      },
      failed?.status ?? 200,
    );
  }

  app.get("/settings/profile", profilePage, (request, reply) => renderProfile(request, reply, {}));

  app.post("/settings/profile", profilePage, async (request, reply) => {
    const values = {
      name: field(request.body, "name") ?? "",
      email: field(request.body, "email") ?? "",
    };
    try {
      await callerOf(deps, request).user.update({
        name: values.name,
        // An emptied field removes the email.
        email: values.email.trim() === "" ? null : values.email.trim(),
      });
      return reply.redirect("/settings/profile?done=profile", 303);
    } catch (error) {
      return renderProfile(request, reply, {
        values,
        profileError: formError(request, reply, error),
      });
    }
  });

  app.post("/settings/profile/password", profilePage, async (request, reply) => {
    const failed = await changePassword(deps, request, reply);
    if (!failed) return reply.redirect("/settings/profile?done=password", 303);
    return renderProfile(request, reply, { passwordError: failed });
  });

  // --- Security: personal access tokens
  const securityPage = { ...pageRoute, preHandler: signedIn({ page: "/settings/security" }) };

  async function renderSecurity(
    request: FastifyRequest,
    reply: FastifyReply,
    state: { values?: TokenForm; error?: FormError; created?: { name: string; token: string } },
  ) {
    const caller = callerOf(deps, request);
    const [tokens, teams] = await Promise.all([caller.token.all(), caller.user.teams()]);
    return sendPage(
      deps,
      request,
      reply,
      "accounts/pages/security",
      {
        title: "Security",
        tokens: tokens.tokens,
        teams: teams.teams,
        admin: request.auth!.admin,
        values: state.values ?? EMPTY_TOKEN_FORM,
        error: state.error,
        created: state.created,
        notice: state.error || state.created ? undefined : notice(request),
        today: new Date().toISOString().slice(0, 10),
      },
      state.error?.status ?? 200,
    );
  }

  app.get("/settings/security", securityPage, (request, reply) =>
    renderSecurity(request, reply, {}),
  );

  app.post("/settings/security/tokens", securityPage, async (request, reply) => {
    const values: TokenForm = {
      name: field(request.body, "name") ?? "",
      expiresAt: field(request.body, "expiresAt") ?? "",
      readOnly: field(request.body, "readOnly") !== undefined,
      teamIds: fields(request.body, "teamIds"),
      adminOptIn: field(request.body, "adminOptIn") !== undefined,
    };
    const input: CreateTokenInput = { name: values.name };
    if (values.expiresAt !== "") input.expiresAt = endOfDay(values.expiresAt);
    if (values.readOnly) input.readOnly = true;
    if (values.teamIds.length > 0) input.teamIds = values.teamIds;
    if (values.adminOptIn) input.adminOptIn = true;
    try {
      const created = await callerOf(deps, request).token.create(input);
      // The value goes into this reply only (never stored, never logged; the reply is no-store).
      return renderSecurity(request, reply, {
        created: { name: created.name, token: created.token },
      });
    } catch (error) {
      return renderSecurity(request, reply, { values, error: formError(request, reply, error) });
    }
  });

  app.post<{ Params: { id: string } }>(
    "/settings/security/tokens/:id/revoke",
    securityPage,
    async (request, reply) => {
      const caller = callerOf(deps, request);
      const { id } = request.params;
      if (field(request.body, "confirmed") !== "yes") {
        // No script ran to ask: ask on a page.
        const token = (await caller.token.all()).tokens.find((t) => t.id === id);
        if (!token) return reply.redirect("/settings/security", 303);
        return sendPage(deps, request, reply, "accounts/pages/revoke", {
          title: "Revoke a token",
          token,
        });
      }
      try {
        await caller.token.delete({ id });
      } catch (error) {
        return sendFailure(deps, request, reply, error, "The token was not revoked", BACK);
      }
      return reply.redirect("/settings/security?done=revoked", 303);
    },
  );
}

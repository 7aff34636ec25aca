// What every administrator's page shares: one tRPC caller of the procedures they use (under the
// same names as in `appRouter`), the API's own refusal of anyone who is not an administrator, and
// the refusal as a page with the API's status.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { accounts } from "../../accounts/index";
import { auditLog } from "../../audit-log/index";
import { catalogue } from "../../catalogue/index";
import { router } from "../../core/trpc";
import { type PageDeps, sendFailure, signedIn } from "../../pages/page";
import { pageRoute } from "../../pages/render";
import { teams } from "../../teams/index";
import { adminRouter } from "../admin";
import { settingsRouter } from "../procedures";

const adminProcedures = router({
  settings: settingsRouter,
  admin: adminRouter,
  users: accounts.procedures.users,
  team: teams.procedures.team,
  teamTypes: teams.procedures.teamTypes,
  auditLog: auditLog.procedures.auditLog,
  ...catalogue.procedures,
});

export type AdminCaller = ReturnType<typeof adminProcedures.createCaller>;

export const callerOf = (deps: PageDeps, request: FastifyRequest): AdminCaller =>
  adminProcedures.createCaller(deps.context(request));

/** The refusal, or any failure outside a form: a page with the API's status and message. */
export function sendRefusal(
  deps: PageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
) {
  return sendFailure(
    deps,
    request,
    reply,
    error,
    (status) =>
      status === 403 ? "Administrators only" : status === 404 ? "Not found" : "Not done",
    { href: "/teams", label: "Back to your teams" },
  );
}

type Handler<P> = (
  request: FastifyRequest<{ Params: P }>,
  reply: FastifyReply,
  caller: AdminCaller,
) => Promise<unknown>;

/**
 * An administrator's page route (GET or POST). Some of the procedures a page calls answer anyone
 * (the catalogue's lists, the settings, a user's own record): first the API's `users.all`, which
 * only administrators may call, so that a page or form under /admin is refused as the API refuses
 * (403), whatever it goes on to call.
 */
export function adminRoute<P = Record<string, never>>(
  app: FastifyInstance,
  deps: PageDeps,
  method: "GET" | "POST",
  path: string,
  handler: Handler<P>,
) {
  const options = { ...pageRoute, preHandler: signedIn({ page: "/admin" }) };
  const wrapped = async (request: FastifyRequest<{ Params: P }>, reply: FastifyReply) => {
    const caller = callerOf(deps, request);
    try {
      await caller.users.all({ limit: 1 });
    } catch (error) {
      return sendRefusal(deps, request, reply, error);
    }
    return handler(request, reply, caller);
  };
  if (method === "GET") app.get<{ Params: P }>(path, options, wrapped);
  else app.post<{ Params: P }>(path, options, wrapped);
}

/** A query parameter as one string, or undefined. */
export function queryOf(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown>)[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === "string" && first !== "" ? first : undefined;
}

// What the account pages need besides rendering: the session settings (signing in), and the API's
// procedures called as the signed-in user of the request — the same procedures, under the same
// paths (which the rate limits count by), as REST and /trpc serve.
import type { FastifyRequest } from "fastify";
import { router } from "../../core/trpc";
import type { EditorHosts } from "../../instances/index";
import type { PageDeps } from "../../pages/page";
import { tokenRouter } from "../../tokens/index";
import type { SessionOptions } from "../sessions";
import { userRouter } from "../user";

const pageProcedures = router({ user: userRouter, token: tokenRouter });

export interface AccountPageDeps extends PageDeps {
  account: SessionOptions;
  editorHosts: EditorHosts;
}

export function callerOf(deps: AccountPageDeps, request: FastifyRequest) {
  return pageProcedures.createCaller(deps.context(request));
}

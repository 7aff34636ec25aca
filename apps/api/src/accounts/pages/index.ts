// The pages of a person's account: sign-in and sign-out, Profile, Security (personal access
// tokens) and the forced new-password page.
import type { FastifyRequest } from "fastify";
import type { Context } from "../../core/trpc";
import type { PageRoutes } from "../../pages/page";
import type { SessionOptions } from "../sessions";
import { settingsPages } from "./settings";
import { signInPages } from "./sign-in";

export function accountPages(options: {
  account: SessionOptions;
  context: (request: FastifyRequest) => Context;
}): PageRoutes {
  return (app, deps) => {
    const own = { ...deps, ...options };
    signInPages(app, own);
    settingsPages(app, own);
  };
}

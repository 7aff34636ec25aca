// What the areas that sign people in need of the rate limits (plugins/rate-limits.ts counts them).
import type { FastifyRequest } from "fastify";

/**
 * A procedure's own limit (its meta's `rateLimit`), per user: FlowFuse's route limits count every
 * call (`routes`, on only with its optional limits unless `always`); the password change counts
 * failed guesses of the current password (`passwordChange`).
 */
export interface ProcedureLimit {
  limit: "routes" | "passwordChange";
  /** On even without FlowFuse's optional limits. */
  always: boolean;
}

/** For every way of signing in (POST /account/login, the sign-in page, an editor's): one count. */
export interface SignInLimits {
  /**
   * Runs a sign-in attempt (`run` throws a 401 for wrong credentials) unless its source made too
   * many password checks (then 429 without one). Failures count against the account and the
   * source; past either limit a wrong password is 429 instead of 401, and the right one still
   * signs in: nobody's failures lock out someone who knows their password.
   */
  attempt<T>(request: FastifyRequest, attempt: SignInAttempt, run: () => Promise<T>): Promise<T>;
}

export interface SignInAttempt {
  /**
   * Whose failures count: the account the login names (`user:<id>`, however it was typed:
   * username or email), else the login as typed.
   */
  account: string;
  /**
   * Where the attempts come from: by default the client's address. An editor's sign-in comes
   * from its instance (every instance calls from 127.0.0.1), so it is counted per instance.
   */
  source?: string;
}

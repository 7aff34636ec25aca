// What the areas that sign people in need of the rate limits (plugins/rate-limits.ts counts them).
import type { FastifyRequest } from "fastify";

/** For every way of signing in (POST /account/login, the sign-in page): one count for all. */
export interface SignInLimits {
  /**
   * Runs a sign-in attempt (`run` throws a 401 for wrong credentials) unless the client address
   * made too many attempts or `username` failed too often (then 429). Every attempt counts
   * against the address; only a failed one against the username, so signing in often does not
   * lock a user out.
   */
  attempt<T>(request: FastifyRequest, username: string, run: () => Promise<T>): Promise<T>;
}

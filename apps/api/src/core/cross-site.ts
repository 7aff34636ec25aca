// The one decision about cross-site request forgery, for every route a signed-in browser's cookie
// reaches (plugins/csrf.ts for /api and /account; the team library's storage routes, which
// authenticate their callers themselves): a write that rides on the cookie must come from a page
// of this platform — its Origin, when it has one, is BASE_URL's; a signed-in write must have one.
import type { FastifyRequest } from "fastify";
import { forbidden } from "./errors";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The refusal of a write from another site, or undefined when the request may go on. Writes to
 * `alwaysChecked` paths (signing in) are checked without a session too.
 */
export function crossSiteRefusal(
  request: FastifyRequest,
  ownOrigin: string,
  signedIn: boolean,
  alwaysChecked?: RegExp,
) {
  if (SAFE_METHODS.has(request.method)) return undefined;
  if (!signedIn && !alwaysChecked?.test(request.url)) return undefined;
  const origin = request.headers.origin;
  if (origin !== undefined ? origin !== ownOrigin : signedIn) {
    return forbidden(
      "Cross-site request refused: the Origin is not this platform's",
      "csrf_failed",
    );
  }
  return undefined;
}

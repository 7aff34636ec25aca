// Cross-site request forgery, judged as Go 1.25's CrossOriginProtection judges it (and as OWASP's
// current guidance describes): the browser says where a request comes from, so no token is needed.
// - `Sec-Fetch-Site` decides where present: `same-origin` (a page of ours) or `none` (typed in,
//   a bookmark) pass; `same-site`, `cross-site` are refused.
// - Where it is absent (an older browser), an `Origin` must be the request's own host (wherever the
//   browser opened the platform: localhost, 127.0.0.1, its public name) or BASE_URL's origin (a proxy
//   that rewrites Host).
// - With neither header the request is not from a browser (every browser in use sends one of them
//   on a write), so no browser's cookie rides on it unasked: a script, which may sign in with a
//   password and use the session, is allowed.
// Only writes are judged; the callers judge only requests that carry a cookie or sign in.

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export interface CrossOriginRequest {
  method: string;
  headers: { host?: string; origin?: string; "sec-fetch-site"?: string | string[] };
}

/** Why the request is refused as cross-site (for the log), or undefined when it may go on. */
export function crossOriginRefusal(
  request: CrossOriginRequest,
  trustedOrigin: string,
): string | undefined {
  if (SAFE_METHODS.has(request.method)) return undefined;
  const site = request.headers["sec-fetch-site"];
  if (site !== undefined) {
    if (site === "same-origin" || site === "none") return undefined;
    return `Sec-Fetch-Site is ${JSON.stringify(String(site))}, not same-origin`;
  }
  const origin = request.headers.origin;
  if (origin === undefined) return undefined;
  if (origin === trustedOrigin) return undefined;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  // The scheme is not compared (Host has none), as Go does: every browser that sends no
  // Sec-Fetch-Site is older than 2023, and HSTS covers an http → https forgery.
  if (host !== undefined && host !== "" && host === request.headers.host?.toLowerCase()) {
    return undefined;
  }
  return `Origin ${JSON.stringify(origin)} is neither this request's host (${JSON.stringify(request.headers.host ?? "")}) nor BASE_URL's origin`;
}

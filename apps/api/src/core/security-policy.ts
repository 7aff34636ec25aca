// The Content-Security-Policy of every reply that is not a page (plugins/security.ts), which the
// pages (pages/render.ts) and the API viewer (plugins/docs.ts) loosen for their own needs.

/** Load nothing, be framed by nothing. */
export const API_CSP = {
  defaultSrc: ["'none'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
};

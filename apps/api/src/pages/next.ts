// Where a page sends the browser next: only a path on this site, never another origin (an open
// redirect would let a link to our sign-in page forward a fresh session's browser anywhere).

export const DEFAULT_NEXT = "/teams";

/**
 * Pages that must not be gone back to after signing in (they would loop or only accept POST);
 * GET /account/authorize is one to go back to: an editor's sign-in goes on there.
 */
const NOT_NEXT = /^\/(sign-in|sign-out|account\/(?!authorize(?:[?#]|$)))/;

/** A backslash (a browser reads it as "/") or a control character. */
const unsafeCharacter = (char: string) => char === "\\" || char <= "\u001f" || char === "\u007f";

/** `next` when it is a same-site path (with its query and fragment), else the Teams page. */
export function safeNext(next: unknown): string {
  if (typeof next !== "string" || !next.startsWith("/")) return DEFAULT_NEXT;
  // "//host" and "/\host" are other sites to a browser, which also drops tabs and newlines.
  if (next.startsWith("//") || [...next].some(unsafeCharacter)) return DEFAULT_NEXT;
  const base = "http://flowplane.invalid";
  let url: URL;
  try {
    url = new URL(next, base);
  } catch {
    return DEFAULT_NEXT;
  }
  if (url.origin !== base) return DEFAULT_NEXT;
  const path = url.pathname + url.search + url.hash;
  // What is returned is judged, not what was read: dot segments can normalize to "//host"
  // ("/.//x", "/a/..//x", "/%2e//x"), which a browser reads as another site.
  if (!path.startsWith("/") || path.startsWith("//") || NOT_NEXT.test(path)) return DEFAULT_NEXT;
  return path;
}

/** A page's URL with `next` in its query, when `next` is not the default. */
export function withNext(page: string, next: string): string {
  return next === DEFAULT_NEXT ? page : `${page}?next=${encodeURIComponent(next)}`;
}

// Next and previous links over the API's forward-only cursors: the page's URL carries the cursors
// of the pages before it (`back`, comma-separated, "" for the first page), so Previous needs no
// state on the server and works without script.

/** The most earlier pages a URL remembers; past them, Previous leads to the first page. */
const MAX_BACK = 50;

export interface PageAt {
  cursor?: string;
  back: string[];
}

/** Where a list is, read from the page's query (`cursor`, `back`). */
export function pageAt(query: unknown): PageAt {
  const { cursor, back } = (query ?? {}) as { cursor?: unknown; back?: unknown };
  return {
    cursor: typeof cursor === "string" && cursor !== "" ? cursor : undefined,
    back: typeof back === "string" ? back.split(",").slice(-MAX_BACK) : [],
  };
}

/** A page's URL with its filters (empty ones left out) and where it is. */
function href(path: string, filters: Record<string, string | undefined>, at: PageAt) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
  if (at.cursor) query.set("cursor", at.cursor);
  if (at.back.length > 0) query.set("back", at.back.join(","));
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/** The links to the previous and next pages (each absent where there is none). */
export function pageLinks(
  path: string,
  filters: Record<string, string | undefined>,
  at: PageAt,
  nextCursor: string | undefined,
): { previous?: string; next?: string } {
  const previous =
    at.cursor === undefined
      ? undefined
      : href(path, filters, {
          cursor: at.back.at(-1) || undefined,
          back: at.back.slice(0, -1),
        });
  const next =
    nextCursor === undefined
      ? undefined
      : href(path, filters, { cursor: nextCursor, back: [...at.back, at.cursor ?? ""] });
  return { previous, next };
}

// A list the API gives a page at a time (`users list`, `team-types list`, `teams list --all`): the
// page --cursor names, or with --all every page from there gathered into one; printed as a table
// and, while there are more, where the next page starts.
import type { Context } from "../context";
import { type Column, json, table } from "../output";

interface Page {
  meta: { next_cursor?: string };
  count: number;
}

/** The page from `cursor`, or (`all`) it and every page after it as one, its items under `key`. */
export async function pageOrAll<K extends string, P extends Page & Record<K, unknown[]>>(
  key: K,
  read: (cursor: string | undefined) => Promise<P>,
  cursor: string | undefined,
  all: boolean | undefined,
): Promise<P> {
  let page = await read(cursor);
  if (!all) return page;
  const every = [...page[key]];
  while (page.meta.next_cursor) {
    page = await read(page.meta.next_cursor);
    every.push(...page[key]);
  }
  return { meta: {}, count: page.count, [key]: every } as unknown as P;
}

/** How a page prints: its columns, what it says when empty, what its items are called. */
export interface PagePrint<T> {
  columns: readonly Column<T>[];
  none: string;
  what: string;
  /** Whether the command takes --all, which the line under a page then suggests. */
  all?: boolean;
}

/** The page (the API's JSON with `asJson`), then where the next page starts while there is one. */
export function printPage<T>(
  context: Context,
  page: Page,
  items: readonly T[],
  how: PagePrint<T>,
  asJson: boolean | undefined,
): void {
  if (asJson) return context.print(json(page));
  context.print(items.length === 0 ? how.none : table(items, how.columns));
  if (page.meta.next_cursor) {
    context.print(
      `\n${items.length} of ${page.count} ${how.what}; next page: --cursor ${page.meta.next_cursor}` +
        `${how.all ? " (or --all for every page)" : ""}\n`,
    );
  }
}

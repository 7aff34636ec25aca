// A list the API gives a page at a time (`users list`, `team-types list`, `teams list --all`): the
// page --cursor names, or with --all every page from there gathered into one; printed as a table
// and, while there are more, where the next page starts. And a list read whole, every page
// (`broker clients list`, `library list`): printed as one page.
import type { Context } from "../context";
import { type Column, json, table } from "../output";

interface Page {
  meta: { next_cursor?: string };
  count: number;
}

/** The page from `cursor`, or (`all`) it and every page after it as one, its items under `key`. */
async function listPageOrAll<K extends string, P extends Page & Record<K, unknown[]>>(
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

/** Items read from every page: the API's JSON of them as one page, or a table (`none` if empty). */
export function printEvery<T>(
  context: Context,
  key: string,
  items: readonly T[],
  how: Pick<PagePrint<T>, "columns" | "none">,
  asJson: boolean | undefined,
): void {
  context.print(
    asJson
      ? json({ meta: {}, count: items.length, [key]: items })
      : items.length === 0
        ? how.none
        : table(items, how.columns),
  );
}

/** `list` of a paged list: the page --cursor names, or --all of them, printed (`printPage`). */
export async function listPages<K extends string, T>(
  context: Context,
  key: K,
  read: (cursor: string | undefined) => Promise<Page & Record<K, T[]>>,
  options: { cursor?: string; all?: boolean; json?: boolean },
  how: PagePrint<T>,
): Promise<void> {
  const page = await listPageOrAll(key, read, options.cursor, options.all);
  printPage(context, page, page[key], how, options.json);
}

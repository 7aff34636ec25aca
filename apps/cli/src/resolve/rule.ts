// How a command line names a thing: the one rule of every command, and the look-ups that apply it.
// A thing is named by its id, by its slug (teams) or by its name (any case). Among the things the
// command can mean (its scope: a team, an application, all the caller's teams …) an exact id wins;
// then a slug; then the name, which must name exactly one: a name that several share is refused,
// listing them (name, id, where) so the person can give the id, and nothing at all is "not found",
// saying what was looked for where. An id outside the scope's lists (an administrator's reach into
// a team they are not in) is fetched by id where the API offers that.
//
// This file holds the rule; the look-ups beside it apply it to each kind of thing (index.ts lists
// them for the commands).
import { isId } from "@flowplane/contract";
import { CliError } from "../errors";

/** A thing a command may mean: what it is called, and where it is (for the list of candidates). */
export interface Named {
  id: string;
  name: string;
  slug?: string;
  where: string;
}

interface Search<T extends Named> {
  /** `instance`, `device group` … */
  kind: string;
  /** What the person typed. */
  given: string;
  /** Where it was looked for, as it follows the kind: `in team Plant`, `of instance line-1`. */
  scope: string;
  candidates: readonly T[];
  /** The thing with this id, when the lists do not hold it (undefined: there is none). */
  byId?: (id: string) => Promise<T | undefined>;
}

/** The one rule: an exact id, else a slug, else the one thing of that name. */
export async function pick<T extends Named>(search: Search<T>): Promise<T> {
  const { kind, given, candidates } = search;
  const scope = search.scope ? ` ${search.scope}` : "";
  const exact = candidates.find((c) => c.id === given);
  if (exact) return exact;
  const bySlug = candidates.find((c) => c.slug !== undefined && c.slug === given);
  if (bySlug) return bySlug;
  const byName = unique(candidates.filter((c) => c.name.toLowerCase() === given.toLowerCase()));
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) {
    throw new CliError(
      `${byName.length} ${kind}s${scope} are named "${given}": give the id of the one you mean`,
      "ambiguous_name",
      byName.map((c) => `${c.name}  id ${c.id}  ${c.where}`),
    );
  }
  const fetched = search.byId && isId(given) ? await search.byId(given) : undefined;
  if (fetched) return fetched;
  const ways = kind === "team" ? "id, slug or name" : "id or name";
  throw new CliError(`no ${kind}${scope} has the ${ways} "${given}"`, "not_found");
}

function unique<T extends Named>(things: readonly T[]): T[] {
  return things.filter((thing, at) => things.findIndex((t) => t.id === thing.id) === at);
}

/** A request's 404 (or 400 for a malformed id) as "there is none". */
export async function orNone<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (error) {
    const status = (error as { data?: { httpStatus?: number } }).data?.httpStatus;
    if (status === 404 || status === 400 || status === 403) return undefined;
    throw error;
  }
}

/** Every item of a list the API gives a page at a time: its items under `key`, then `meta`'s cursor. */
export async function listEvery<K extends string, T>(
  key: K,
  read: (cursor?: string) => Promise<{ meta: { next_cursor?: string } } & Record<K, T[]>>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    all.push(...page[key]);
    cursor = page.meta.next_cursor;
  } while (cursor !== undefined);
  return all;
}

/** A thing already found: its id and its name. */
export interface Ref {
  id: string;
  name: string;
}

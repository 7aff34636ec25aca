// Changes that could alter what a token reaches, as PostgreSQL notifies them. The migration
// `access-notifications` puts a row trigger on every table an authentication query reads (tokens
// and their teams, users, teams, memberships, team types): each change notifies the channel
// `flowplane_access` with the changed table's schema, when its transaction commits.
//
// An `AccessFeed` listens on a connection of its own and counts what it hears (`generation`), so
// that a process can keep what those queries answered and still see another process's change on
// the very next request:
// - `barrier()` is one trivial statement on the listening connection. PostgreSQL sends a
//   listener the notifications pending for it before it says it is ready for the next statement,
//   and a commit signals the listeners before its client hears it committed; so when a barrier
//   sent after a commit returns, that commit's notification has been heard. Requests that arrive
//   while a barrier is out wait for the next one, and share it: one round trip for many requests.
//   The statement asks the server process's id: behind a pooler that moved the connection to
//   another server process (where nothing listens) it differs, and the feed counts as lost. A
//   barrier unanswered in BARRIER_TIMEOUT_MS answers false and drops the connection (a
//   half-open TCP connection would otherwise hold every read that has a kept answer).
// - While the connection is down (not yet up, lost, or closed) `live` is false and a barrier
//   answers false: what was kept must not be trusted, since notifications may have been missed.
//   Every change of state moves `generation` too. It reconnects on its own.
//
// PGlite has no feed (`accessFeed` answers undefined): one process, and nothing to keep.
import type { Kysely } from "kysely";
import pg from "pg";
import type { Database } from "./schema";

// The database as create-db.ts names it (Db), here without importing it: create-db.ts imports this.
type Db = Kysely<Database>;

const CHANNEL = "flowplane_access";
const RETRY_MS = 1_000;
const BARRIER_TIMEOUT_MS = 2_000;

/** How a database's feed connects: what `createDb` knew of the server. */
export interface FeedTarget {
  connectionString: string;
  options?: string;
  feeds: Set<AccessFeed>;
}

const targets = new WeakMap<Db, FeedTarget>();

/** Records where `db`'s server is (createDb), so that a feed can reach it. */
export function registerFeedTarget(db: Db, target: Omit<FeedTarget, "feeds">): FeedTarget {
  const full = { ...target, feeds: new Set<AccessFeed>() };
  targets.set(db, full);
  return full;
}

/** Closes every feed of a database: the pool's end calls it first. */
export async function closeFeeds(target: FeedTarget): Promise<void> {
  await Promise.all([...target.feeds].map((feed) => feed.close()));
}

/** A feed of `db`'s access changes, started; undefined on PGlite. */
export function accessFeed(db: Db, onError?: (error: Error) => void): AccessFeed | undefined {
  const target = targets.get(db);
  if (!target) return undefined;
  const feed = new AccessFeed(target, onError);
  target.feeds.add(feed);
  return feed;
}

export class AccessFeed {
  /** Moves on every change heard and every loss or gain of the connection. */
  generation = 0;
  /** The listening connection's server process (tests end it to see the feed recover). */
  backendPid: number | undefined;
  private client: pg.Client | undefined;
  private schema = "";
  private closed = false;
  private connecting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** An outage is reported once, not at every retry. */
  private reported = false;
  private barrierOut = false;
  private waiting: Array<(ok: boolean) => void> = [];
  private readonly listeners = new Set<() => void>();
  private readyWaiters: Array<() => void> = [];

  constructor(
    private readonly target: FeedTarget,
    private readonly onError?: (error: Error) => void,
  ) {
    this.connecting = this.connect();
  }

  /** Listening now: a barrier can answer true. */
  get live(): boolean {
    return this.client !== undefined;
  }

  /** Resolves when the feed is live (at once if it is); never rejects. */
  ready(): Promise<void> {
    if (this.live || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /** Calls `listener` on every move of `generation`. */
  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  /**
   * True once every change committed before this call has been heard (and counted in
   * `generation`); false when the feed is not live or lost its connection meanwhile.
   */
  barrier(): Promise<boolean> {
    if (!this.client) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (!this.barrierOut) this.sendBarrier();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.target.feeds.delete(this);
    clearTimeout(this.retry);
    await this.connecting;
    const client = this.client;
    this.lost(client);
    for (const resolve of this.readyWaiters.splice(0)) resolve();
    await client?.end().catch(() => {});
  }

  private sendBarrier(): void {
    const client = this.client;
    const batch = this.waiting;
    this.waiting = [];
    if (!client) {
      for (const resolve of batch) resolve(false);
      return;
    }
    this.barrierOut = true;
    let settled = false;
    const settle = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      this.barrierOut = false;
      if (!ok) this.drop(client);
      for (const resolve of batch) resolve(ok);
      if (this.waiting.length > 0) this.sendBarrier();
    };
    const timer = setTimeout(() => settle(false), BARRIER_TIMEOUT_MS);
    // The connection is idle whenever no barrier is out, so the statement leaves at once: every
    // request in `batch` arrived before it was sent.
    client.query<{ pid: number }>("select pg_backend_pid() as pid").then(
      ({ rows }) => settle(this.client === client && rows[0]?.pid === this.backendPid),
      () => settle(false),
    );
  }

  private changed(): void {
    this.generation++;
    for (const listener of this.listeners) listener();
  }

  /** Gives up a connection that cannot be trusted; `connect` makes a new one. */
  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.lost(client);
    client.end().catch(() => {});
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.closed || this.retry !== undefined) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connecting = this.connect();
    }, RETRY_MS).unref();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.target.connectionString,
      ...(this.target.options ? { options: this.target.options } : {}),
      application_name: "flowplane access feed",
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: 10_000,
    });
    let gone = false;
    const fail = (error?: Error) => {
      if (gone) return;
      gone = true;
      if (error && !this.closed && !this.reported) {
        this.reported = true;
        this.onError?.(error);
      }
      this.lost(client);
      client.end().catch(() => {});
      this.scheduleRetry();
    };
    client.on("error", fail);
    client.on("end", () => fail());
    client.on("notification", (message) => {
      if (message.payload === this.schema && this.client === client) this.changed();
    });
    try {
      await client.connect();
      const { rows } = await client.query<{ schema: string; pid: number }>(
        "select current_schema() as schema, pg_backend_pid() as pid",
      );
      this.schema = rows[0]!.schema;
      this.backendPid = rows[0]!.pid;
      await client.query(`listen ${CHANNEL}`);
    } catch (error) {
      fail(error as Error);
      return;
    }
    if (gone) return;
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.reported = false;
    this.changed();
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  private lost(client: pg.Client | undefined): void {
    if (client === undefined || this.client !== client) return;
    this.client = undefined;
    this.changed();
    const batch = this.waiting;
    this.waiting = [];
    for (const resolve of batch) resolve(false);
  }
}

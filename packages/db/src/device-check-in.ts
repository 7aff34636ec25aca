// A device's check-in (`POST /api/v1/devices/<id>/live/state`), the hottest path once there are
// thousands of devices: one statement authenticates the device by its token's digest, reads its
// target, and records what it reports. Check-ins that arrive while another batch is on its way
// to the database go together in the next statement, so that under load many check-ins share one
// round trip (one socket write, one PostgreSQL backend woken) instead of one each; each check-in
// still runs in a statement sent after it arrived, so a token revoked before it is refused.
import { type Kysely, sql } from "kysely";
import { compiledOnce } from "./compiled-once";
import { effectiveTarget } from "./devices";
import type { Database } from "./schema";

type Db = Kysely<Database>;

/** What a device reports at check-in. */
export interface CheckIn {
  state: string | null;
  agentVersion: string | null;
  nodeRedVersion: string | null;
  nodejsVersion: string | null;
  /** The snapshot it runs; null (or FlowFuse's '0', the starter flows) for none. */
  snapshot: string | null;
  /** The hash of the settings it runs with; null for none. */
  settings: string | null;
}

/** What the platform wants of a device, as its check-in compares it. */
export interface DeviceTarget {
  application_id: string | null;
  project_id: string | null;
  settings_hash: string;
  target: string | null;
}

/** A check-in's answer: the target, and what the caller is to announce (events/platform.ts). */
export interface CheckedIn extends DeviceTarget {
  /** It polls over HTTP (no MQTT session ever) and was not announced online. */
  coming_online: boolean;
  /** It reports another snapshot than it was last announced running. */
  snapshot_changed: boolean;
}

/**
 * How stale a device's stored `last_seen_at` may get while it keeps checking in with nothing new
 * to report: a check-in within this long of the stored one, reporting what is stored already,
 * writes nothing. `lastSeenAt` is then at most this much older than the device's last check-in;
 * `onlineStatus` (30 minutes) is unaffected at this resolution.
 */
export const LAST_SEEN_RESOLUTION_MS = 1000;

/** Check-ins in one statement at most (a bound on its size; more wait for the next). */
const BATCH_MAX = 200;
/** Statements of check-ins on their way at once (each holds a pooled connection). */
const IN_FLIGHT_MAX = 2;

interface Pending {
  id: string;
  digest: string;
  report: CheckIn;
  resolve: (target: CheckedIn | undefined) => void;
  reject: (error: unknown) => void;
}

interface Batcher {
  queue: Pending[];
  inFlight: number;
  scheduled: boolean;
}

const batchers = new WeakMap<Db, Batcher>();

/**
 * A check-in: the device found by its id and its token's digest together (a wrong, regenerated or
 * deleted token matches nothing and changes nothing: undefined); the answer is its target. The
 * row is written only when the report differs from what is stored, or the stored `last_seen_at`
 * is older than `LAST_SEEN_RESOLUTION_MS`: a device in step checking in again at once (the agent
 * does after every deploy) is a read, with no row lock and no WAL flush.
 */
export function checkInDevice(
  db: Db,
  id: string,
  tokenDigest: string,
  report: CheckIn,
): Promise<CheckedIn | undefined> {
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = { queue: [], inFlight: 0, scheduled: false };
    batchers.set(db, batcher);
  }
  const b = batcher;
  return new Promise((resolve, reject) => {
    b.queue.push({ id, digest: tokenDigest, report, resolve, reject });
    schedule(db, b);
  });
}

function schedule(db: Db, b: Batcher) {
  if (b.scheduled || b.inFlight >= IN_FLIGHT_MAX || b.queue.length === 0) return;
  b.scheduled = true;
  // After this turn's other I/O callbacks: the check-ins that arrived together go together.
  setImmediate(() => {
    b.scheduled = false;
    while (b.inFlight < IN_FLIGHT_MAX && b.queue.length > 0) {
      const batch = b.queue.splice(0, BATCH_MAX);
      b.inFlight++;
      void runSettling(db, batch).finally(() => {
        b.inFlight--;
        schedule(db, b);
      });
    }
  });
}

/**
 * Runs a batch and settles each of its check-ins. When the batch's statement fails, each check-in
 * is tried again on its own, one after another in the batch's slot: one device's faulty report
 * (or a device whose row the statement cannot write) fails only its own check-in, never those of
 * other devices, other teams', that happened to share its statement.
 */
async function runSettling(db: Db, batch: Pending[]): Promise<void> {
  try {
    const targets = await run(db, batch);
    batch.forEach((p, i) => p.resolve(targets[i]));
    return;
  } catch (error) {
    if (batch.length === 1) {
      batch[0]!.reject(error);
      return;
    }
  }
  for (const p of batch) {
    try {
      p.resolve((await run(db, [p]))[0]);
    } catch (error) {
      p.reject(error);
    }
  }
}

const lastSeenResolution = sql.raw(`interval '${LAST_SEEN_RESOLUTION_MS} milliseconds'`);

/** One statement for a batch of check-ins; the answers in the batch's order. */
async function run(db: Db, batch: Pending[]): Promise<(CheckedIn | undefined)[]> {
  const column = (of: (p: Pending) => string | null) => batch.map(of);
  const rows = await checkInStatement(
    db,
    column((p) => p.id),
    column((p) => p.digest),
    column((p) => p.report.state),
    column((p) => p.report.agentVersion),
    column((p) => p.report.nodeRedVersion),
    column((p) => p.report.nodejsVersion),
    column((p) => p.report.snapshot),
    column((p) => p.report.settings),
  );
  const answers: (CheckedIn | undefined)[] = new Array(batch.length).fill(undefined);
  for (const { n, ...target } of rows) answers[Number(n) - 1] = target;
  return answers;
}

type Column = (string | null)[];

/**
 * The statement, compiled once: each column of the batch is one array parameter, so its text never
 * changes (built each time, Kysely compiled it again and the prepared statement's name was found
 * by hashing its whole text: ~6 % of a check-in's CPU in the profile).
 */
const checkInStatement = compiledOnce(
  (
    _db,
    ids: Column,
    digests: Column,
    states: Column,
    agentVersions: Column,
    nodeRedVersions: Column,
    nodejsVersions: Column,
    snapshots: Column,
    settings: Column,
  ) => sql<CheckedIn & { n: string }>`with input as (
      select * from unnest(
        ${ids}::text[], ${digests}::text[], ${states}::text[], ${agentVersions}::text[],
        ${nodeRedVersions}::text[], ${nodejsVersions}::text[], ${snapshots}::text[],
        ${settings}::text[]
      ) with ordinality as i(id, digest, state, agent_version, node_red_version, nodejs_version,
        snapshot, settings, n)
    ), found as (
      select i.*, d.application_id, d.project_id, d.settings_hash, ${effectiveTarget} as target,
        d.last_seen_at is null
          or d.last_seen_at < now() - ${lastSeenResolution}
          or d.state is distinct from i.state
          or d.agent_version is distinct from i.agent_version
          or d.node_red_version is distinct from i.node_red_version
          or d.nodejs_version is distinct from i.nodejs_version
          or d.active_snapshot_id is distinct from i.snapshot
          or d.active_settings_hash is distinct from i.settings as stale,
        d.mqtt_connected is null and d.online is not true as coming_online,
        d.announced_snapshot_id is distinct from i.snapshot as snapshot_changed
      from input i join devices d on d.id = i.id and d.token_digest = i.digest
    ), written as (
      -- A device twice in one batch: its latest report is what is stored.
      update devices w set
        last_seen_at = now(),
        state = f.state,
        agent_version = f.agent_version,
        node_red_version = f.node_red_version,
        nodejs_version = f.nodejs_version,
        active_snapshot_id = f.snapshot,
        active_settings_hash = f.settings
      from (select distinct on (id) * from found order by id, n desc) f
      where f.stale and w.id = f.id and w.token_digest = f.digest
    )
    select n, application_id, project_id, settings_hash, target, coming_online,
      snapshot_changed from found`,
);

// Reading the audit log: a team's, the platform's or a user's own, newest first, a page at a time.
// Keyset paging on (created_at, id) from the cursor's row, over an index in that order for each log
// (migration 2026-11-23T1400), so a page costs the same with a million entries as with ten.
import { type Expression, type Kysely, type SqlBool, sql } from "kysely";
import { containing, pageOf } from "../paging";
import type { Database } from "../schema";

/** Which log. */
export type AuditLogOf =
  /** A team's entries; `entityType` narrows them to those about one kind of entity. */
  | { teamId: string; entityType?: string }
  /** Platform and account events, for administrators. */
  | { platform: true }
  /** Entries about the user's account, and changes the user made to accounts. */
  | { userId: string }
  /** Entries about one entity (a device's log). */
  | { entity: { type: string; id: string } }
  /** Entries about any of these sets of entities (an application's or an instance's log). */
  | { entities: readonly EntitySet[] };

/** One kind of entity: one by id, or those of an application or an instance. */
export type EntitySet =
  | { type: "application" | "project" | "device"; id: string }
  | { type: "project"; ofApplication: string }
  | { type: "device"; ofApplication: string }
  | { type: "device"; ofProject: string }
  /** The devices of the application's instances. */
  | { type: "device"; ofApplicationInstances: string };

function entitySet(set: EntitySet): Where[] {
  const type = sql<SqlBool>`a.entity_type = ${set.type}`;
  if ("id" in set) return [type, sql<SqlBool>`a.entity_id = ${set.id}`];
  if ("ofProject" in set) {
    return [
      type,
      sql<SqlBool>`a.entity_id in (select d.id from devices d where d.project_id = ${set.ofProject})`,
    ];
  }
  if ("ofApplicationInstances" in set) {
    return [
      type,
      sql<SqlBool>`a.entity_id in (select d.id from devices d join projects p on p.id = d.project_id where p.application_id = ${set.ofApplicationInstances})`,
    ];
  }
  const table = set.type === "project" ? sql`projects` : sql`devices`;
  return [
    type,
    sql<SqlBool>`a.entity_id in (select e.id from ${table} e where e.application_id = ${set.ofApplication})`,
  ];
}

export interface AuditLogQuery {
  limit: number;
  /** The id of the last entry seen: the page holds older entries. */
  cursor?: string;
  events?: readonly string[];
  /** The acting user's exact username. */
  username?: string;
  /** Text the event, body, username or user's name contains, in any case. */
  query?: string;
}

export interface AuditLogRow {
  id: string;
  created_at: Date;
  event: string;
  entity_type: string;
  entity_id: string | null;
  actor_id: string | null;
  source: string | null;
  body: Record<string, unknown>;
  /** The acting user's username (null for the platform, or a user since deleted). */
  username: string | null;
  /** The address the acting request came from (null for the platform, or not recorded). */
  ip: string | null;
}

export interface AuditLogPage {
  rows: AuditLogRow[];
  /** Matching entries, counted up to `countCap`. */
  count: number;
  nextCursor?: string;
}

type Db = Kysely<Database>;
type Where = Expression<SqlBool>;

/** The conditions that pick one index's entries; a user's log is two such ranges. */
function ranges(of: AuditLogOf): Where[][] {
  if ("teamId" in of) {
    const team = sql<SqlBool>`a.team_id = ${of.teamId}`;
    return [of.entityType ? [team, sql<SqlBool>`a.entity_type = ${of.entityType}`] : [team]];
  }
  // Literal SQL, not parameters: the partial indexes' predicates must match in any plan.
  if ("platform" in of) return [[sql<SqlBool>`a.entity_type in ('platform', 'user')`]];
  if ("entities" in of) return of.entities.map(entitySet);
  if ("entity" in of) {
    return [
      [
        sql<SqlBool>`a.entity_type = ${of.entity.type}`,
        sql<SqlBool>`a.entity_id = ${of.entity.id}`,
      ],
    ];
  }
  return [
    [sql<SqlBool>`a.entity_type = 'user'`, sql<SqlBool>`a.entity_id = ${of.userId}`],
    [sql<SqlBool>`a.entity_type = 'user'`, sql<SqlBool>`a.actor_id = ${of.userId}`],
  ];
}

function filters(query: AuditLogQuery): Where[] {
  const where: Where[] = [];
  if (query.events && query.events.length > 0) {
    where.push(sql<SqlBool>`a.event in (${sql.join(query.events)})`);
  }
  if (query.username !== undefined) {
    where.push(
      sql<SqlBool>`a.actor_id = (select u.id from users u where u.username = ${query.username})`,
    );
  }
  if (query.query !== undefined) {
    const pattern = containing(query.query);
    where.push(sql<SqlBool>`(a.event ilike ${pattern} or a.body::text ilike ${pattern}
      or a.actor_id in (select u.id from users u where u.username ilike ${pattern} or u.name ilike ${pattern}))`);
  }
  return where;
}

const and = (conditions: Where[]) => sql.join(conditions, sql` and `);

export async function listAuditLog(
  db: Db,
  of: AuditLogOf,
  query: AuditLogQuery,
  countCap: number,
): Promise<AuditLogPage> {
  const filtered = filters(query);
  // The cursor's row as two scalar subqueries, not a row subquery: then the comparison is an
  // index condition, and the scan starts at the cursor instead of filtering up to it.
  const after =
    query.cursor === undefined
      ? []
      : [
          sql<SqlBool>`(a.created_at, a.id) < ((select c.created_at from audit_log c where c.id = ${query.cursor}), ${query.cursor})`,
        ];
  const page = ranges(of).map(
    (range) =>
      sql`(select a.* from audit_log a where ${and([...range, ...filtered, ...after])}
        order by a.created_at desc, a.id desc limit ${query.limit + 1})`,
  );
  // In the index's order, as the page: without it a generic plan (prepared statements) may pick
  // a sequential scan that reads the whole table for a log with fewer than `countCap` entries.
  const counted = ranges(of).map(
    (range) =>
      sql`(select a.id from audit_log a where ${and([...range, ...filtered])}
        order by a.created_at desc, a.id desc limit ${countCap})`,
  );

  const [rows, total] = await Promise.all([
    sql<AuditLogRow>`select p.id, p.created_at, p.event, p.entity_type, p.entity_id, p.actor_id,
        p.source, p.body, p.ip, u.username
      from (${sql.join(page, sql` union `)}) p
      left join users u on u.id = p.actor_id
      order by p.created_at desc, p.id desc
      limit ${query.limit + 1}`.execute(db),
    sql<{ n: number }>`select least(count(*), ${countCap})::int as n
      from (${sql.join(counted, sql` union `)}) c`.execute(db),
  ]);
  return { ...pageOf(rows.rows, query.limit), count: total.rows[0]!.n };
}

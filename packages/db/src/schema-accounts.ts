// The tables of accounts and teams (schema.ts): users and their sessions, teams with their types,
// members and invitations, access tokens, the audit log, and the team broker's clients and tokens.
import type { ColumnType, Generated } from "kysely";
import type { CreatedAt, Timestamp } from "./schema-columns";

export interface UsersTable {
  id: string;
  username: string;
  name: string;
  email: string | null;
  admin: Generated<boolean>;
  /** scrypt, in the format of @flowplane/auth's hashPassword; null: cannot sign in. */
  password_hash: string | null;
  /** The next sign-in must choose a new password first. */
  password_expired: Generated<boolean>;
  /** Suspended users' tokens and sessions fail; they cannot sign in. */
  suspended: Generated<boolean>;
  default_team_id: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface TeamTypesTable {
  id: string;
  name: string;
  description: string | null;
  active: Generated<boolean>;
  order: Generated<number>;
  /** Per-team limits and features: `{ users: { limit }, instances: { limit }, devices: { limit },
   * teamBroker: { clients: { limit } } }`; a null or absent limit is no limit. */
  properties: ColumnType<Record<string, unknown>, string | undefined, string>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface InvitationsTable {
  id: string;
  team_id: string;
  invitor_id: string | null;
  /** The invited user; null when the invitation went to an email nobody has yet. */
  invitee_id: string | null;
  email: string | null;
  role: number;
  created_at: CreatedAt;
  sent_at: Timestamp;
  expires_at: Date;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  /** HMAC-SHA-256 of the cookie's value, keyed by the server secret. */
  digest: string;
  created_at: CreatedAt;
  /** Written at most once a minute per session, for the idle timeout. */
  last_seen_at: Timestamp;
  /** The fixed maximum age: no activity extends it. */
  expires_at: Date;
  /** An instance's editor session: reaches that instance's editor only, never the platform. */
  project_id: ColumnType<string | null, string | null | undefined, never>;
  /** An editor session a script made with the person's own token: kept while the password is
   *  expired, as that token is. */
  scripted: ColumnType<boolean, boolean | undefined, never>;
}

export interface TeamsTable {
  id: string;
  name: string;
  slug: string;
  /** The team type (its limits); the default type when not chosen. */
  type_id: Generated<string>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Bumped by every update a client could overwrite (its ETag; migration resource-versions). */
  version: Generated<number>;
}

export interface TeamMembersTable {
  team_id: string;
  user_id: string;
  role: number;
  created_at: CreatedAt;
}

export interface AccessTokensTable {
  id: string;
  user_id: string;
  /** The token that created this one; revoking it revokes this one (ON DELETE CASCADE). */
  parent_id: string | null;
  name: string;
  /** HMAC-SHA-256 of the value, keyed by the server secret. The value itself is never stored. */
  digest: string;
  read_only: boolean;
  admin_opt_in: boolean;
  /** When true, only the teams in access_token_teams; an empty set then reaches no team. */
  team_restricted: boolean;
  expires_at: Date | null;
  last_used_at: Date | null;
  created_at: CreatedAt;
}

export interface AccessTokenTeamsTable {
  token_id: string;
  team_id: string;
}

export interface AuditLogTable {
  id: string;
  created_at: CreatedAt;
  event: string;
  /** What the entry is about: `platform`, `user` or `team` (later: application, project, device). */
  entity_type: string;
  entity_id: string | null;
  /** The team the entity belongs to, for the team's log. */
  team_id: string | null;
  /** The user who acted; null for the system. */
  actor_id: string | null;
  /** `api` for requests made with a token, null in a signed-in browser, `system` for the platform. */
  source: string | null;
  token_id: string | null;
  body: ColumnType<Record<string, unknown>, string, string>;
  /** The address the request came from (TRUST_PROXY's client address); null for the platform. */
  ip: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface TeamBrokerClientsTable {
  id: string;
  team_id: string;
  /** The bare name; MQTT clients connect as `<username>@<team_id>`. */
  username: string;
  /** scrypt, in the format of @flowplane/auth's hashPassword. */
  password_hash: string;
  /** `[{ action, pattern }]`. */
  acls: ColumnType<{ action: "subscribe" | "publish" | "both"; pattern: string }[], string, string>;
  owner_type: string | null;
  owner_id: string | null;
  version: Generated<number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface BrokerTokensTable {
  id: string;
  name: string;
  /** HMAC-SHA-256 of the value, keyed by the server secret. The value itself is never stored. */
  digest: string;
  created_by: string | null;
  last_used_at: Date | null;
  created_at: CreatedAt;
}

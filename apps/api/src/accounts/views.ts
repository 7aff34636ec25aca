// Users as the API shows them (FlowFuse's view shapes).
import type { User, UserTeam } from "@flowplane/contract";
import type { UserRow, UserTeamRow } from "@flowplane/db";
import { teamSummary } from "../teams/index";

export function userView(row: UserRow, baseUrl: string): User {
  return {
    id: row.id,
    username: row.username,
    name: row.name,
    email: row.email,
    admin: row.admin,
    suspended: row.suspended,
    ...(row.default_team_id ? { defaultTeam: row.default_team_id } : {}),
    ...(row.password_expired ? { password_expired: true as const } : {}),
    createdAt: row.created_at.toISOString(),
    links: { self: `${baseUrl}/api/v1/users/${row.id}` },
  };
}

/** Views of rows the authenticator keeps (frozen, shared by requests): built once a row. */
const keptViews = new WeakMap<UserTeamRow, { baseUrl: string; view: UserTeam }>();

/** A team of the user's, with their role in it. */
export function userTeamView(row: UserTeamRow, baseUrl: string): UserTeam {
  if (!Object.isFrozen(row)) return buildUserTeamView(row, baseUrl);
  const kept = keptViews.get(row);
  if (kept?.baseUrl === baseUrl) return kept.view;
  const view = Object.freeze(buildUserTeamView(row, baseUrl));
  keptViews.set(row, { baseUrl, view });
  return view;
}

function buildUserTeamView(row: UserTeamRow, baseUrl: string): UserTeam {
  return {
    ...teamSummary(row, baseUrl),
    type: { id: row.type_id, name: row.type_name, active: row.type_active },
    role: row.role as UserTeam["role"],
    memberCount: row.member_count,
  };
}

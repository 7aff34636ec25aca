// Database rows as the API shows them (FlowFuse's view shapes).
import type {
  Team,
  TeamType,
  TeamTypeProperties,
  TeamTypeSummary,
  TokenSummary,
  User,
  UserTeam,
} from "@flowplane/contract";
import type {
  TeamTypeRow,
  TeamTypeSummaryRow,
  TeamWithCount,
  TokenSummaryRow,
  UserRow,
  UserTeamRow,
} from "@flowplane/db";

const iso = (date: Date) => date.toISOString();
const isoOrNull = (date: Date | null) => (date ? date.toISOString() : null);

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
    createdAt: iso(row.created_at),
    links: { self: `${baseUrl}/api/v1/users/${row.id}` },
  };
}

export function teamSummary(row: Pick<TeamWithCount, "id" | "name" | "slug">, baseUrl: string) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    links: { self: `${baseUrl}/api/v1/teams/${row.id}` },
  };
}

export function teamView(row: TeamWithCount, baseUrl: string): Team {
  return {
    ...teamSummary(row, baseUrl),
    type: teamTypeSummaryView(row.type),
    memberCount: row.member_count,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function teamTypeSummaryView(row: TeamTypeSummaryRow | TeamTypeRow): TeamTypeSummary {
  return {
    id: row.id,
    name: row.name,
    active: row.active,
    order: row.order,
    description: row.description,
    // Written only through the contract's schema, so stored properties have its shape.
    properties: row.properties as TeamTypeProperties,
  };
}

export function teamTypeView(row: TeamTypeRow): TeamType {
  return {
    ...teamTypeSummaryView(row),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function userTeamView(row: UserTeamRow, baseUrl: string): UserTeam {
  return {
    ...teamSummary(row, baseUrl),
    type: { id: row.type_id, name: row.type_name, active: row.type_active },
    role: row.role as UserTeam["role"],
    memberCount: row.member_count,
  };
}

export function tokenView(row: TokenSummaryRow): TokenSummary {
  return {
    id: row.id,
    name: row.name,
    expiresAt: isoOrNull(row.expires_at),
    readOnly: row.read_only,
    adminOptIn: row.admin_opt_in,
    teams: row.teams,
    createdAt: iso(row.created_at),
    lastUsedAt: isoOrNull(row.last_used_at),
  };
}

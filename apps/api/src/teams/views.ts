// Teams and team types as the API shows them (FlowFuse's view shapes).
import type { Team, TeamType, TeamTypeProperties, TeamTypeSummary } from "@flowplane/contract";
import type { TeamTypeRow, TeamTypeSummaryRow, TeamWithCount } from "@flowplane/db";

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
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
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
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

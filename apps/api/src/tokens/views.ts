// Personal access tokens as the API shows them (never their value, nor their digest).
import type { TokenSummary } from "@flowplane/contract";
import type { TokenSummaryRow } from "@flowplane/db";

export function tokenView(row: TokenSummaryRow): TokenSummary {
  return {
    id: row.id,
    name: row.name,
    expiresAt: row.expires_at?.toISOString() ?? null,
    readOnly: row.read_only,
    adminOptIn: row.admin_opt_in,
    teams: row.teams,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

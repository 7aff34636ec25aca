// What every page of one team starts from: the team and the caller's place in it, read through
// the API's own procedures (a team the caller cannot see is their 404), and the permissions the
// caller's role grants — from the permission matrix, so a page shows only what the API allows.
import type { Permission } from "@flowplane/auth";
import type { Team, TeamMembership } from "@flowplane/contract";
import { roleLabel } from "./roles";

/** The team procedures a team page reads (`team.byId`, `team.membership`). */
export interface TeamReader {
  byId(input: { teamId: string }): Promise<Team>;
  membership(input: { teamId: string }): Promise<TeamMembership>;
}

export interface TeamPlace {
  team: Team;
  role: number;
  roleLabel: string;
  /** Whether the caller's role grants the permission in this team. */
  can: (permission: Permission) => boolean;
}

export async function teamPlace(reader: TeamReader, teamId: string): Promise<TeamPlace> {
  const [team, { role, permissions }] = await Promise.all([
    reader.byId({ teamId }),
    reader.membership({ teamId }),
  ]);
  return {
    team,
    role,
    roleLabel: roleLabel(role),
    can: (permission) => permissions.includes(permission),
  };
}

// Team roles as the pages name them, and the roles an owner can give.
import { Role, TEAM_ROLES } from "@flowplane/contract";

const LABELS: Record<number, string> = {
  [Role.dashboard]: "Dashboard",
  [Role.viewer]: "Viewer",
  [Role.member]: "Member",
  [Role.owner]: "Owner",
  [Role.admin]: "Administrator",
};

/** "Owner", "Viewer" …; an administrator acting in a team they are not a member of is 99. */
export const roleLabel = (level: number) => LABELS[level] ?? `Role ${level}`;

/** The choices of a role field, highest first. */
export const ROLE_CHOICES = [...TEAM_ROLES]
  .reverse()
  .map((role) => ({ value: role, label: roleLabel(role) }));

// Team members: who is in a team, with which role, and the inputs that change or end a membership.
import { z } from "zod";
import { Id, Timestamp } from "../common";
import { TeamRole } from "./roles";

/** A user as other users see them: no email, nothing private. */
export const UserSummary = z
  .object({
    id: Id,
    username: z.string(),
    name: z.string(),
    admin: z.boolean().describe("Platform administrator"),
    createdAt: Timestamp,
    suspended: z.boolean(),
  })
  .meta({ id: "UserSummary" });
export type UserSummary = z.infer<typeof UserSummary>;

export const TeamMember = UserSummary.extend({ role: TeamRole }).meta({ id: "TeamMember" });
export type TeamMember = z.infer<typeof TeamMember>;

export const TeamMemberList = z
  .object({
    meta: z.object({}).describe("Always empty: the list is not paged"),
    count: z.number().int(),
    members: z.array(TeamMember),
  })
  .meta({ id: "TeamMemberList" });
export type TeamMemberList = z.infer<typeof TeamMemberList>;

/**
 * A role as given in a body. Any number is taken here so that one outside 5/10/30/50 is the
 * API's 400 `invalid_team_role` (as FlowFuse answers), not a generic validation error.
 */
export const RequestedRole = z
  .number()
  .int()
  .describe(
    "Team role: 5 dashboard, 10 viewer, 30 member, 50 owner; any other is 400 `invalid_team_role`",
  );

export const TEAM_ROLES: readonly TeamRole[] = [5, 10, 30, 50];

export const isTeamRole = (role: number): role is TeamRole =>
  (TEAM_ROLES as readonly number[]).includes(role);

export const TeamMemberInput = z.strictObject({ teamId: Id, userId: Id });

export const ChangeMemberRoleInput = z.strictObject({
  teamId: Id,
  userId: Id,
  role: RequestedRole,
});
export type ChangeMemberRoleInput = z.infer<typeof ChangeMemberRoleInput>;

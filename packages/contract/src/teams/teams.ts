import { z } from "zod";
import { CappedCount, Id, Links, ListMeta, Name, PageInput, Text, Timestamp } from "../common";
import { TeamRole } from "./roles";
import { TeamTypeSummary } from "./team-types";

export const Slug = Text.min(1)
  .max(64)
  .regex(/^[a-z0-9_-]+$/, "Only lower-case letters, digits, '-' and '_'")
  .refine((slug) => slug !== "create", "'create' is reserved")
  .describe("Unique, URL-safe team name");

export const TeamSummary = z
  .object({
    id: Id,
    name: z.string(),
    slug: z.string(),
    links: Links,
  })
  .meta({ id: "TeamSummary" });
export type TeamSummary = z.infer<typeof TeamSummary>;

export const Team = TeamSummary.extend({
  type: TeamTypeSummary,
  memberCount: z.number().int(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}).meta({ id: "Team" });
export type Team = z.infer<typeof Team>;

/** A team as one of its members sees it in their own list. */
export const UserTeam = TeamSummary.extend({
  type: TeamTypeSummary.pick({ id: true, name: true, active: true }),
  role: TeamRole,
  memberCount: z.number().int(),
}).meta({ id: "UserTeam" });
export type UserTeam = z.infer<typeof UserTeam>;

export const TeamList = z
  .object({ meta: ListMeta, count: CappedCount, teams: z.array(Team) })
  .meta({ id: "TeamList" });
export type TeamList = z.infer<typeof TeamList>;

export const UserTeamList = z
  .object({ meta: ListMeta, count: z.number().int(), teams: z.array(UserTeam) })
  .meta({ id: "UserTeamList" });
export type UserTeamList = z.infer<typeof UserTeamList>;

export const TeamIdInput = z.strictObject({ teamId: Id });

export const ListTeamsInput = z.strictObject({ ...PageInput });

export const CreateTeamInput = z.strictObject({
  name: Name,
  slug: Slug.optional().describe("Defaults to the name, made URL-safe (and unique)"),
  type: Id.optional().describe(
    "An active team type's id; default: the active type with the lowest `order`",
  ),
});
export type CreateTeamInput = z.infer<typeof CreateTeamInput>;

export const UpdateTeamInput = z.strictObject({
  teamId: Id,
  name: Name.optional(),
  slug: Slug.optional(),
});
export type UpdateTeamInput = z.infer<typeof UpdateTeamInput>;

export const TeamSlugInput = z.strictObject({ slug: Slug });

export const CheckSlugInput = z.strictObject({ slug: Slug });

/** The caller's place in a team: `GET /teams/{teamId}/user`. */
export const TeamMembership = z
  .object({
    role: z
      .number()
      .int()
      .describe("Team role (5, 10, 30, 50), or 99 for an administrator who is not a member"),
    permissions: z
      .array(z.string())
      .describe("The team permissions the role grants (names from the permission matrix)"),
  })
  .meta({ id: "TeamMembership" });
export type TeamMembership = z.infer<typeof TeamMembership>;

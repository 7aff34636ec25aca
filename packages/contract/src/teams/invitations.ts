// Invitations to join a team: what a team's owners send (to a user, or to an email nobody has
// yet) and what the invited user accepts or rejects.
import { z } from "zod";
import { Id, Text, Timestamp } from "../common";
import { RequestedRole, UserSummary } from "./members";
import { TeamRole } from "./roles";
import { TeamSummary } from "./teams";
import { Status } from "../common";

/** How long an invitation lasts after it is sent (or sent again). */
export const INVITATION_DAYS = 7;

/** At most this many invitees in one request, after removing repeats. */
export const MAX_INVITEES = 5;

export const ExternalInvitee = z
  .object({
    external: z.literal(true),
    email: z
      .string()
      .describe(
        "The email it was sent to, as typed; the same whether an account has it or not (only an account that had it when it was sent can accept it)",
      ),
  })
  .meta({ id: "ExternalInvitee" });

/** A user invited by username, as the team sees them until they accept: the name it was sent to. */
export const InvitedUser = z
  .object({ username: z.string().describe("The username it was sent to") })
  .meta({ id: "InvitedUser" });

export const Invitation = z
  .object({
    id: Id,
    role: TeamRole,
    createdAt: Timestamp,
    sentAt: Timestamp,
    expiresAt: Timestamp.describe(`${INVITATION_DAYS} days after it was last sent`),
    team: TeamSummary,
    // Inline rather than a nullable reference, which OpenAPI 3.0 cannot express.
    invitor: z
      .object(UserSummary.shape)
      .nullable()
      .describe("The user who sent it; null once that user is deleted"),
    invitee: z
      .union([UserSummary, InvitedUser, ExternalInvitee])
      .describe(
        "To the invitee: themselves. To the team, until they accept: only what it was sent to (a username, or an email as typed)",
      ),
  })
  .meta({ id: "Invitation" });
export type Invitation = z.infer<typeof Invitation>;

export const InvitationList = z
  .object({
    meta: z.object({}).describe("Always empty: the list is not paged"),
    count: z.number().int(),
    invitations: z.array(Invitation),
  })
  .meta({ id: "InvitationList" });
export type InvitationList = z.infer<typeof InvitationList>;

/** Some invitations were made and some were not: why, per invitee as it was given. */
export const InvitationFailed = z
  .object({
    code: z.literal("invitation_failed"),
    error: z
      .record(z.string(), z.string())
      .describe("Each invitee that was not invited, with the reason"),
  })
  .meta({ id: "InvitationFailed" });

/** `{ status: "okay" }` when every invitee was invited. */
export const InvitationResult = z.union([Status, InvitationFailed]);
export type InvitationResult = z.infer<typeof InvitationResult>;

export const CreateInvitationInput = z.strictObject({
  teamId: Id,
  user: Text.min(1)
    .max(2048)
    .describe(
      `Usernames and/or emails, comma-separated; at most ${MAX_INVITEES} after removing repeats`,
    ),
  role: RequestedRole.optional().describe(
    "The role the invitees get: 5, 10, 30 (default) or 50; any other is 400 `invalid_team_role`",
  ),
});
export type CreateInvitationInput = z.infer<typeof CreateInvitationInput>;

export const TeamInvitationInput = z.strictObject({ teamId: Id, invitationId: Id });

export const InvitationIdInput = z.strictObject({ invitationId: Id });

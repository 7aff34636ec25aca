import { z } from "zod";
import { Id, ListMeta, Name, Text, Timestamp } from "./common";

export const TokenTeam = z.object({ id: Id, name: z.string() });

export const TokenSummary = z
  .object({
    id: Id,
    name: z.string(),
    expiresAt: Timestamp.nullable().describe("null: never expires"),
    readOnly: z.boolean(),
    adminOptIn: z.boolean(),
    teams: z
      .array(TokenTeam)
      .describe("The teams this token is restricted to; empty: every team of its owner"),
    createdAt: Timestamp,
    lastUsedAt: Timestamp.nullable().describe("Updated at most once a minute"),
  })
  .meta({ id: "PersonalAccessTokenSummary" });
export type TokenSummary = z.infer<typeof TokenSummary>;

export const CreatedToken = TokenSummary.extend({
  token: z.string().describe("The token's value. It is shown here once and cannot be recovered."),
}).meta({ id: "PersonalAccessToken" });
export type CreatedToken = z.infer<typeof CreatedToken>;

export const TokenList = z
  .object({ meta: ListMeta, count: z.number().int(), tokens: z.array(TokenSummary) })
  .meta({ id: "PersonalAccessTokenList" });
export type TokenList = z.infer<typeof TokenList>;

/** Epoch milliseconds (as FlowFuse) or an ISO-8601 timestamp. */
export const ExpiresAt = z
  .union([z.number().int().positive(), Text.check(z.iso.datetime({ offset: true }))])
  .describe("When the token stops working: epoch milliseconds or an ISO-8601 timestamp");

const TeamIds = z
  .array(Id)
  .max(100)
  .describe("Restrict the token to these teams (you must be a member); empty or absent: all teams");

export const CreateTokenInput = z.strictObject({
  name: Name,
  expiresAt: ExpiresAt.optional(),
  readOnly: z.boolean().optional().describe("Refuse every write (default false)"),
  teamIds: TeamIds.optional(),
  adminOptIn: z
    .boolean()
    .optional()
    .describe("Carry the owner's administrator rights (administrators only; default false)"),
});
export type CreateTokenInput = z.infer<typeof CreateTokenInput>;

export const UpdateTokenInput = z.strictObject({
  id: Id,
  name: Name.optional(),
  expiresAt: ExpiresAt.nullable().optional().describe("null: never expires; absent: unchanged"),
  readOnly: z.boolean().optional(),
  teamIds: TeamIds.optional(),
  adminOptIn: z.boolean().optional(),
});
export type UpdateTokenInput = z.infer<typeof UpdateTokenInput>;

export const TokenIdInput = z.strictObject({ id: Id });

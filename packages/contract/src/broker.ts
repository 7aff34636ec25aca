// The team broker: a team's MQTT clients (FlowFuse's `/teams/{teamId}/broker/client…` routes), the
// rules their usernames and ACL patterns follow, and the callbacks an external broker (EMQX) calls.
import { z } from "zod";
import { DEFAULT_PAGE_SIZE, Id, ListMeta, Text, Timestamp } from "./common";

/** A team client's bare username. */
export const BROKER_USERNAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The longest topic or topic filter accepted (MQTT allows 65,535 bytes; none needs that). */
export const MAX_TOPIC_LENGTH = 1024;

/**
 * Why an ACL pattern (an MQTT topic filter) is refused, or undefined when it is valid: non-empty,
 * `+` and `#` only as whole levels, `#` only last, nothing starting with `$` (the broker's own
 * topics are never a team's), no NUL.
 */
export function topicFilterProblem(filter: string): string | undefined {
  if (filter.length === 0) return "A topic filter cannot be empty";
  if (filter.length > MAX_TOPIC_LENGTH) return `At most ${MAX_TOPIC_LENGTH} characters`;
  if (filter.includes("\u0000")) return "A topic filter cannot contain NUL";
  if (filter.startsWith("$")) return "Topics starting with '$' belong to the broker";
  const levels = filter.split("/");
  for (let i = 0; i < levels.length; i++) {
    const level = levels[i]!;
    if (level.includes("#") && (level !== "#" || i !== levels.length - 1)) {
      return "'#' must be a whole level, and the last one";
    }
    if (level.includes("+") && level !== "+") return "'+' must be a whole level";
  }
  return undefined;
}

export const BrokerUsername = Text.max(64)
  .regex(BROKER_USERNAME, "1 to 64 letters, digits, '_', '.' or '-' ('@' and ':' are the broker's)")
  .describe("The bare name; the client connects as `<username>@<teamId>`");

export const BrokerPassword = Text.min(8, "At least 8 characters")
  .max(128, "At most 128 characters")
  .describe("8 to 128 characters; stored as a scrypt hash, never returned");

export const BrokerAction = z.enum(["subscribe", "publish", "both"]);

export const TopicFilter = Text.max(MAX_TOPIC_LENGTH)
  .superRefine((value, ctx) => {
    const problem = topicFilterProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .describe("An MQTT topic filter: `+` one whole level, `#` the last level and all below");

export const BrokerAcl = z
  .strictObject({
    action: BrokerAction.describe("`both` allows publish and subscribe"),
    pattern: TopicFilter,
  })
  .meta({ id: "BrokerAcl" });
export type BrokerAcl = z.infer<typeof BrokerAcl>;

export const BrokerAcls = z
  .array(BrokerAcl)
  .min(1, "At least one ACL: a client with none could do nothing")
  .max(100, "At most 100 ACLs");

export const BrokerClient = z
  .object({
    id: Id,
    username: z.string(),
    acls: z.array(BrokerAcl),
    owner: z
      .object({
        instanceType: z.enum(["instance", "device"]),
        id: z.string(),
        name: z.string(),
        applicationId: z.string().nullable(),
      })
      .nullable()
      .describe("The instance or device the client belongs to; null for a team's own client"),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: "BrokerClient" });
export type BrokerClient = z.infer<typeof BrokerClient>;

export const BrokerClientList = z
  .object({ meta: ListMeta, count: z.number().int(), clients: z.array(BrokerClient) })
  .meta({ id: "BrokerClientList" });
export type BrokerClientList = z.infer<typeof BrokerClientList>;

export const ListBrokerClientsInput = z.strictObject({
  teamId: Id,
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(DEFAULT_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .describe(`How many clients to return (1–${DEFAULT_PAGE_SIZE}, as FlowFuse)`),
  cursor: BrokerUsername.optional().describe("The `meta.next_cursor` of the previous page"),
  query: Text.max(64).optional().describe("Only clients whose username contains this"),
});

export const BrokerClientInput = z.strictObject({ teamId: Id, username: BrokerUsername });

export const CreateBrokerClientInput = z.strictObject({
  teamId: Id,
  username: BrokerUsername,
  password: BrokerPassword,
  acls: BrokerAcls,
});

export const UpdateBrokerClientInput = z.strictObject({
  teamId: Id,
  username: BrokerUsername,
  password: BrokerPassword.optional().describe(
    "A new password: the client's live session is closed at once",
  ),
  acls: BrokerAcls.optional().describe("Replaces the ACLs; the next operation is decided by them"),
});

/** EMQX's HTTP authentication request, as FlowFuse's EMQX configuration sends it. */
export const BrokerAuthRequest = z.strictObject({
  clientId: Text.max(256),
  username: Text.max(256),
  password: Text.max(1024),
});

export const BrokerAuthResponse = z.union([
  z.object({
    result: z.literal("allow"),
    is_superuser: z.literal(false),
    client_attrs: z.object({ team: z.string().describe("The mountpoint: `ff/v1/<teamId>/c/`") }),
  }),
  z.object({ result: z.literal("deny") }),
]);
export type BrokerAuthResponse = z.infer<typeof BrokerAuthResponse>;

/** EMQX's HTTP authorization request: the topic as the client gave it (not mounted). */
export const BrokerAclRequest = z.strictObject({
  username: Text.max(256),
  topic: Text.max(MAX_TOPIC_LENGTH * 4),
  action: z.enum(["publish", "subscribe"]),
});

export const BrokerAclResponse = z.object({ result: z.enum(["allow", "deny"]) });

export const BrokerToken = z
  .object({
    id: Id,
    name: z.string(),
    createdAt: Timestamp,
    lastUsedAt: Timestamp.nullable(),
  })
  .meta({ id: "BrokerToken" });
export type BrokerToken = z.infer<typeof BrokerToken>;

export const NewBrokerToken = BrokerToken.extend({
  token: z.string().describe("The token (`fpb_…`): shown once, in this reply only"),
}).meta({ id: "NewBrokerToken" });

export const BrokerTokenList = z
  .object({ count: z.number().int(), tokens: z.array(BrokerToken) })
  .meta({ id: "BrokerTokenList" });

export const CreateBrokerTokenInput = z.strictObject({
  name: Text.trim().min(1, "Must not be blank").max(128),
});

export const BrokerTokenInput = z.strictObject({ tokenId: Id });

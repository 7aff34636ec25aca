import { z } from "zod";
import { Id, Links, ListMeta, Name, PageInput, Text, Timestamp } from "./common";

export const User = z
  .object({
    id: Id,
    username: z.string(),
    name: z.string(),
    email: z.string().nullable(),
    admin: z.boolean().describe("Platform administrator"),
    suspended: z.boolean().describe("A suspended user cannot sign in; their tokens fail"),
    defaultTeam: Id.optional().describe("The team the user lands in; absent when none is set"),
    password_expired: z
      .literal(true)
      .optional()
      .describe("Present (true) when the next sign-in must choose a new password"),
    createdAt: Timestamp,
    links: Links,
  })
  .meta({ id: "User" });
export type User = z.infer<typeof User>;

export const UserList = z
  .object({ meta: ListMeta, count: z.number().int(), users: z.array(User) })
  .meta({ id: "UserList" });
export type UserList = z.infer<typeof UserList>;

/** FlowFuse's rule, and lower-case: usernames are unique without regard to case. */
export const Username = Text.min(1)
  .max(64)
  .regex(/^[a-z0-9_-]+$/, "Only lower-case letters, digits, '-' and '_'")
  .describe("Unique; lower-case letters, digits, '-' and '_'");

/** Names nobody may take: they would pass for the platform or its administrators. */
export const RESERVED_USERNAMES = ["admin", "administrator", "root", "system", "flowplane"];

export const Email = Text.max(254)
  .check(z.email({ message: "Not a valid email address" }))
  .describe("Unique; sign-in accepts it in place of the username");

/** A password as typed; its strength is checked against the user's names by the server. */
export const Password = Text.max(1024).describe(
  "At least 8 characters, and not containing the username, name or email",
);

export const UserIdInput = z.strictObject({ userId: Id });

export const ListUsersInput = z.strictObject({
  ...PageInput,
  query: Text.max(128).optional().describe("Matches username, name or email (any case)"),
});

export const CreateUserInput = z.strictObject({
  username: Username,
  name: Name,
  email: Email.optional(),
  password: Password,
  isAdmin: z
    .boolean()
    .optional()
    .describe("Make the user a platform administrator (default false)"),
});
export type CreateUserInput = z.infer<typeof CreateUserInput>;

/** What a user may change of their own account. */
const ProfileFields = {
  name: Name.optional(),
  username: Username.optional(),
  email: Email.nullable().optional().describe("null removes it"),
  defaultTeam: Id.nullable().optional().describe("A team you are a member of; null clears it"),
};

export const UpdateCurrentUserInput = z.strictObject(ProfileFields);
export type UpdateCurrentUserInput = z.infer<typeof UpdateCurrentUserInput>;

export const UpdateUserInput = z.strictObject({
  userId: Id,
  ...ProfileFields,
  admin: z.boolean().optional().describe("Administrators only"),
  suspended: z.boolean().optional().describe("Administrators only"),
  password_expired: z.boolean().optional().describe("Administrators only"),
});
export type UpdateUserInput = z.infer<typeof UpdateUserInput>;

export const ChangePasswordInput = z.strictObject({
  old_password: Password,
  password: Password,
});

export const LoginInput = z.strictObject({
  username: Text.min(1).max(254).describe("Username or email"),
  password: Text.max(1024),
});
export type LoginInput = z.infer<typeof LoginInput>;

export const Status = z.object({ status: z.literal("okay") }).meta({ id: "APIStatus" });

export const InstanceIsolation = z
  .object({
    mode: z
      .enum(["sandbox", "none"])
      .describe(
        "`sandbox`: each instance sees only its own files and processes; `none`: instances run as ordinary processes of the platform's user and can read everything it can",
      ),
    user: z
      .enum(["per-instance", "platform"])
      .describe("Whether each instance runs under a user id of its own, or the platform's"),
    required: z
      .boolean()
      .describe("INSTANCE_ISOLATION=required: an instance without its sandbox does not start"),
    reason: z
      .string()
      .optional()
      .describe("Why instances have no sandbox, or share the platform's user id"),
  })
  .meta({ id: "InstanceIsolation" });
export type InstanceIsolation = z.infer<typeof InstanceIsolation>;

export const Settings = z
  .object({
    version: z.string().describe("The platform's version"),
    base_url: z.string().describe("The platform's public URL"),
    "team:create": z.boolean().describe("Whether the caller may create teams"),
    "team:broker:host": z
      .string()
      .optional()
      .describe("The team broker's host name (absent when the platform runs none)"),
    "team:broker:url": z
      .string()
      .optional()
      .describe("Flowplane's: the team broker's URL, e.g. `mqtt://127.0.0.1:1883`"),
    "platform:instances:isolation": InstanceIsolation.optional().describe(
      "Flowplane's, for administrators: how hosted instances are kept from the machine and each other (absent when the platform runs none)",
    ),
  })
  .catchall(z.unknown())
  .meta({ id: "Settings" });
export type Settings = z.infer<typeof Settings>;

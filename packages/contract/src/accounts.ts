import { z } from "zod";
import { CappedCount, Id, Links, ListMeta, Name, PageInput, Text, Timestamp } from "./common";

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
  .object({ meta: ListMeta, count: CappedCount, users: z.array(User) })
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

/** How long after signing in a session may change its expired password without giving it again. */
export const FRESH_SIGN_IN_MINUTES = 10;

export const ChangePasswordInput = z.strictObject({
  old_password: Password.optional().describe(
    `The current password. Required, except in a session that signed in with an expired password less than ${FRESH_SIGN_IN_MINUTES} minutes ago: it has just been given`,
  ),
  password: Password,
});

export const LoginInput = z.strictObject({
  username: Text.min(1).max(254).describe("Username or email"),
  password: Text.max(1024),
});
export type LoginInput = z.infer<typeof LoginInput>;

// What the accounts area writes in the audit log, as FlowFuse logs it: every event in the user's
// own log, its body naming the user first. `user.*` when the person acted on their own account,
// `users.*` when an administrator acted on theirs.
import { type Db, recordAudit } from "@flowplane/db";
import { type Actor, userLog } from "../core/audit";

interface UserNamed {
  id: string;
  username: string;
}

export type UserEvent =
  | "account.login"
  | "account.logout"
  | "user.updated-password"
  | "user.signed-out-everywhere"
  | "user.updated-user"
  | "users.updated-user"
  | "user.deleted"
  | "users.deleted-user";

/** An event of the user's account, with what else it names (`updates`, `sessions`…). */
export function recordUserEvent(
  trx: Db,
  event: UserEvent,
  actor: Actor,
  user: UserNamed,
  more: Record<string, unknown> = {},
): Promise<void> {
  const body = { user: { id: user.id, username: user.username }, ...more };
  return recordAudit(trx, { event, ...userLog(user.id), actor, body });
}

/** An administrator created the user. */
export function recordUserCreated(
  trx: Db,
  actor: Actor,
  user: UserNamed & { admin: boolean },
): Promise<void> {
  const body = { user: { id: user.id, username: user.username, admin: user.admin } };
  return recordAudit(trx, { event: "users.created-user", ...userLog(user.id), actor, body });
}

/** The first administrator and their first token, made by the platform's first start. */
export async function recordFirstAdmin(
  trx: Db,
  user: UserNamed,
  token: { id: string; name: string },
): Promise<void> {
  const log = userLog(user.id);
  const who = { id: user.id, username: user.username };
  await recordAudit(trx, {
    event: "users.created-user",
    ...log,
    actor: "system",
    body: { user: who, reason: "first start" },
  });
  await recordAudit(trx, {
    event: "user.pat.created",
    ...log,
    actor: "system",
    body: { token: { id: token.id, name: token.name, adminOptIn: true } },
  });
}

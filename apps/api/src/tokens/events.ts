// What the tokens area writes in the audit log, as FlowFuse logs it: `user.pat.*` in the owner's
// own log, naming the token and its scope (never its value).
import type { TokenScope } from "@flowplane/auth";
import { type Db, recordAudit } from "@flowplane/db";
import { type Actor, userLog } from "../core/audit";

interface TokenNamed {
  id: string;
  name: string;
}

function scopeBody(scope: TokenScope) {
  return {
    readOnly: scope.readOnly,
    adminOptIn: scope.adminOptIn,
    teamIds: scope.teamIds,
    expiresAt: scope.expiresAt?.toISOString() ?? null,
  };
}

const record = (
  trx: Db,
  verb: "created" | "updated" | "deleted",
  actor: Actor,
  userId: string,
  body: Record<string, unknown>,
) => recordAudit(trx, { event: `user.pat.${verb}`, ...userLog(userId), actor, body });

export function recordTokenCreated(
  trx: Db,
  actor: Actor,
  userId: string,
  token: TokenNamed,
  scope: TokenScope,
): Promise<void> {
  const body = { token: { id: token.id, name: token.name, ...scopeBody(scope) } };
  return record(trx, "created", actor, userId, body);
}

/** A change of name or scope: the token's name and scope before and after. */
export function recordTokenUpdated(
  trx: Db,
  actor: Actor,
  userId: string,
  before: TokenNamed & TokenScope,
  after: { name: string; scope: TokenScope },
): Promise<void> {
  return record(trx, "updated", actor, userId, {
    token: { id: before.id, name: after.name },
    before: { name: before.name, ...scopeBody(before) },
    after: { name: after.name, ...scopeBody(after.scope) },
  });
}

/** A token revoked, with the tokens created with it that went with it. */
export function recordTokenDeleted(
  trx: Db,
  actor: Actor,
  userId: string,
  token: TokenNamed,
  revokedWithIt: TokenNamed[],
): Promise<void> {
  return record(trx, "deleted", actor, userId, {
    token: { id: token.id, name: token.name },
    revokedWithIt: revokedWithIt.map((t) => ({ id: t.id, name: t.name })),
  });
}

// Token hierarchy rules: a token may only create or change tokens no broader than itself, and a
// token that is narrowed narrows the tokens created with it.
import type { TokenScope } from "./permissions";

export type ScopeViolation = "read_only" | "admin_opt_in" | "teams" | "expiry";

/** Why `child` is broader than `parent`, or undefined when it is within it. */
export function scopeViolation(child: TokenScope, parent: TokenScope): ScopeViolation | undefined {
  if (parent.readOnly && !child.readOnly) return "read_only";
  if (child.adminOptIn && !parent.adminOptIn) return "admin_opt_in";
  if (parent.teamIds !== null) {
    if (child.teamIds === null) return "teams";
    if (child.teamIds.some((id) => !parent.teamIds!.includes(id))) return "teams";
  }
  if (parent.expiresAt !== null) {
    if (child.expiresAt === null || child.expiresAt > parent.expiresAt) return "expiry";
  }
  return undefined;
}

/** The largest scope within both: what a child becomes when its parent is narrowed. */
export function narrowScope(child: TokenScope, parent: TokenScope): TokenScope {
  return {
    readOnly: child.readOnly || parent.readOnly,
    adminOptIn: child.adminOptIn && parent.adminOptIn,
    teamIds:
      parent.teamIds === null
        ? child.teamIds
        : (child.teamIds ?? parent.teamIds).filter((id) => parent.teamIds!.includes(id)),
    expiresAt:
      parent.expiresAt === null
        ? child.expiresAt
        : child.expiresAt === null || child.expiresAt > parent.expiresAt
          ? parent.expiresAt
          : child.expiresAt,
  };
}

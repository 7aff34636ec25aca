// The permission matrix in words, for the OpenAPI document's descriptions and docs/permissions.md.
import { roleName } from "@flowplane/contract";
import { type Permission, type PermissionRule, PERMISSIONS } from "./permissions";

/** Who a rule lets act: "team owner (50) or above", "platform administrators" … */
export function whoMay(rule: PermissionRule): string {
  switch (rule.kind) {
    case "team": {
      const role = `team ${roleName(rule.role) ?? "role"} (${rule.role}) or above`;
      return "orSelf" in rule ? `${role}, or any member on their own membership` : role;
    }
    case "self":
      return "wholeAccount" in rule
        ? "the caller, on their own account (another user's: administrators only), with a token not restricted to teams"
        : "the caller, on their own account (another user's: administrators only)";
    case "admin":
      return "platform administrators (a token with admin opt-in, not restricted to teams)";
    case "user":
      return "any signed-in user";
  }
}

/** What a read-only token may do with it. */
export function accessInWords(rule: PermissionRule): string {
  return rule.access === "write"
    ? "write (refused to read-only tokens)"
    : "read (allowed to read-only tokens)";
}

/** One line: "Permission: `team:edit` — team owner (50) or above; write (refused to read-only tokens)". */
export function describePermission(permission: Permission): string {
  const rule: PermissionRule = PERMISSIONS[permission];
  return `Permission: \`${permission}\` — ${whoMay(rule)}; ${accessInWords(rule)}`;
}

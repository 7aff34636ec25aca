import { describe, expect, test } from "vitest";
import { describePermission } from "./permission-words";
import { type Permission, PERMISSIONS } from "./permissions";

describe("describePermission", () => {
  test("names the permission, who may use it and whether read-only tokens may", () => {
    expect(describePermission("team:edit")).toBe(
      "Permission: `team:edit` — team owner (50) or above; write (refused to read-only tokens)",
    );
    expect(describePermission("team:read")).toBe(
      "Permission: `team:read` — team dashboard (5) or above; read (allowed to read-only tokens)",
    );
    expect(describePermission("team:user:remove")).toContain(
      "team owner (50) or above, or any member on their own membership; write",
    );
    expect(describePermission("user:list")).toContain("platform administrators");
    expect(describePermission("settings:read")).toContain("any signed-in user");
  });

  test("describes every permission of the matrix in words", () => {
    for (const permission of Object.keys(PERMISSIONS) as Permission[]) {
      expect(describePermission(permission)).not.toMatch(/undefined|team role \(/);
    }
  });
});

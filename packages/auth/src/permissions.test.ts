import { Role } from "@flowplane/contract";
import { describe, expect, test } from "vitest";
import { caller } from "./test-fixtures";
import { authorize } from "./permissions";

const team = (role: number | undefined, exists = true) => ({
  id: "t1",
  membershipRole: role,
  exists,
});

describe("authorize", () => {
  test("team permissions follow the role levels", () => {
    expect(authorize("team:read", caller(), team(Role.dashboard))).toEqual({ allowed: true });
    expect(authorize("team:edit", caller(), team(Role.owner))).toEqual({ allowed: true });
    for (const role of [Role.dashboard, Role.viewer, Role.member]) {
      expect(authorize("team:edit", caller(), team(role))).toEqual({ allowed: false, status: 403 });
    }
  });

  test("non-members and unknown teams are 404, before any other rule", () => {
    expect(authorize("team:read", caller(), team(undefined))).toEqual({
      allowed: false,
      status: 404,
    });
    expect(authorize("team:edit", caller({}, { readOnly: true }), team(undefined, false))).toEqual({
      allowed: false,
      status: 404,
    });
  });

  test("a team outside the token's restriction is 404 even for its owner", () => {
    const restricted = caller({}, { teamIds: ["other"] });
    expect(authorize("team:read", restricted, team(Role.owner))).toEqual({
      allowed: false,
      status: 404,
    });
    expect(authorize("team:read", caller({}, { teamIds: ["t1"] }), team(Role.owner))).toEqual({
      allowed: true,
    });
  });

  test("a token restricted to teams cannot change or delete the account; it still reads it", () => {
    const restricted = caller({}, { teamIds: ["t1"] });
    for (const permission of ["user:edit", "user:delete"] as const) {
      expect(authorize(permission, restricted)).toMatchObject({ allowed: false, status: 403 });
      expect(authorize(permission, caller())).toEqual({ allowed: true });
    }
    expect(authorize("user:read", restricted)).toEqual({ allowed: true });
    expect(authorize("user:token:edit", restricted)).toEqual({ allowed: true });
  });

  test("read-only tokens fail every write and pass reads", () => {
    const ro = caller({}, { readOnly: true });
    expect(authorize("team:edit", ro, team(Role.owner))).toEqual({ allowed: false, status: 403 });
    expect(authorize("team:create", ro)).toEqual({ allowed: false, status: 403 });
    expect(authorize("user:token:edit", ro)).toEqual({ allowed: false, status: 403 });
    expect(authorize("team:read", ro, team(Role.viewer))).toEqual({ allowed: true });
    expect(authorize("user:read", ro)).toEqual({ allowed: true });
  });

  test("admin rights need both the admin flag and an opt-in token", () => {
    expect(authorize("team:list", caller({ admin: true }, { adminOptIn: true }))).toEqual({
      allowed: true,
    });
    expect(authorize("team:list", caller({ admin: true }))).toEqual({
      allowed: false,
      status: 403,
    });
    expect(authorize("team:list", caller({}, { adminOptIn: true }))).toEqual({
      allowed: false,
      status: 403,
    });
    expect(
      authorize("team:edit", caller({ admin: true }, { adminOptIn: true }), team(undefined)),
    ).toEqual({
      allowed: true,
    });
    expect(authorize("team:edit", caller({ admin: true }), team(undefined))).toEqual({
      allowed: false,
      status: 404,
    });
  });

  test("an opted-in admin token restricted to teams has no admin rights, in or out of a team", () => {
    const restricted = caller({ admin: true }, { adminOptIn: true, teamIds: ["t1"] });
    for (const permission of ["team:list", "user:create", "platform:audit-log"] as const) {
      expect(authorize(permission, restricted)).toMatchObject({ allowed: false, status: 403 });
      expect(authorize(permission, restricted)).toHaveProperty(
        "message",
        expect.stringContaining("restricted to teams"),
      );
    }
    // Another user's account is administration too; its own account stays its own.
    expect(authorize("user:read", restricted, undefined, { userId: "other" })).toMatchObject({
      allowed: false,
      status: 403,
    });
    expect(authorize("user:read", restricted, undefined, { userId: "u" })).toEqual({
      allowed: true,
    });
    // In a team of its list it counts as its membership, not as an administrator.
    expect(authorize("team:read", restricted, team(undefined))).toEqual({
      allowed: false,
      status: 404,
    });
    expect(authorize("team:edit", restricted, team(Role.member))).toEqual({
      allowed: false,
      status: 403,
    });
  });
});

import { describe, expect, test } from "vitest";
import { scope } from "./test-fixtures";
import { narrowScope, scopeViolation } from "./token-scope";

const soon = new Date("2030-01-01T00:00:00Z");
const later = new Date("2031-01-01T00:00:00Z");

describe("scopeViolation", () => {
  test("a child equal to or narrower than its parent is within it", () => {
    expect(scopeViolation(scope(), scope())).toBeUndefined();
    expect(
      scopeViolation(scope({ readOnly: true, teamIds: ["a"], expiresAt: soon }), scope()),
    ).toBeUndefined();
    expect(
      scopeViolation(scope({ teamIds: ["a"] }), scope({ teamIds: ["a", "b"] })),
    ).toBeUndefined();
  });

  test("names the first way a child is broader", () => {
    expect(scopeViolation(scope(), scope({ readOnly: true }))).toBe("read_only");
    expect(scopeViolation(scope({ adminOptIn: true }), scope())).toBe("admin_opt_in");
    expect(scopeViolation(scope(), scope({ teamIds: ["a"] }))).toBe("teams");
    expect(scopeViolation(scope({ teamIds: ["b"] }), scope({ teamIds: ["a"] }))).toBe("teams");
    expect(scopeViolation(scope(), scope({ expiresAt: soon }))).toBe("expiry");
    expect(scopeViolation(scope({ expiresAt: later }), scope({ expiresAt: soon }))).toBe("expiry");
  });
});

describe("narrowScope", () => {
  test("takes the narrower of each part", () => {
    const child = scope({ adminOptIn: true, teamIds: ["a", "b"], expiresAt: later });
    const parent = scope({ readOnly: true, teamIds: ["b", "c"], expiresAt: soon });
    expect(narrowScope(child, parent)).toEqual({
      readOnly: true,
      adminOptIn: false,
      teamIds: ["b"],
      expiresAt: soon,
    });
  });

  test("an unrestricted child of a restricted parent gets the parent's teams; no overlap is no team", () => {
    expect(narrowScope(scope(), scope({ teamIds: ["a"] })).teamIds).toEqual(["a"]);
    expect(narrowScope(scope({ teamIds: ["x"] }), scope({ teamIds: ["a"] })).teamIds).toEqual([]);
  });

  test("the result is always within the parent", () => {
    const parents = [
      scope(),
      scope({ readOnly: true }),
      scope({ teamIds: ["a"] }),
      scope({ expiresAt: soon }),
    ];
    const children = [
      scope({ adminOptIn: true }),
      scope({ teamIds: ["a", "z"] }),
      scope({ expiresAt: later }),
    ];
    for (const parent of parents) {
      for (const child of children) {
        expect(scopeViolation(narrowScope(child, parent), parent)).toBeUndefined();
      }
    }
  });
});

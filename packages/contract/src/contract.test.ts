import { describe, expect, test } from "vitest";
import { CreateTeamInput, CreateTokenInput, ListTeamsInput, UpdateTokenInput } from "./index";

describe("inputs", () => {
  test("unknown fields are refused", () => {
    expect(CreateTeamInput.safeParse({ name: "a", extra: 1 }).success).toBe(false);
    expect(CreateTokenInput.safeParse({ name: "a", scope: "x" }).success).toBe(false);
  });

  test("bodies are not coerced: a number is not a name, a string not a boolean", () => {
    expect(CreateTeamInput.safeParse({ name: 123 }).success).toBe(false);
    expect(CreateTokenInput.safeParse({ name: "a", readOnly: "true" }).success).toBe(false);
  });

  test("names are trimmed and must not be blank or over 128 characters", () => {
    expect(CreateTeamInput.parse({ name: "  Ops  " }).name).toBe("Ops");
    expect(CreateTeamInput.safeParse({ name: "   " }).success).toBe(false);
    expect(CreateTeamInput.safeParse({ name: "x".repeat(129) }).success).toBe(false);
  });

  test("slugs are lower-case URL-safe and never 'create'", () => {
    expect(CreateTeamInput.safeParse({ name: "a", slug: "ok-slug_1" }).success).toBe(true);
    for (const slug of ["Upper", "with space", "create", "", "a".repeat(65)]) {
      expect(CreateTeamInput.safeParse({ name: "a", slug }).success, slug).toBe(false);
    }
  });

  test("expiresAt is epoch milliseconds or ISO-8601; null clears it only on update", () => {
    expect(CreateTokenInput.safeParse({ name: "a", expiresAt: 1893456000000 }).success).toBe(true);
    expect(
      CreateTokenInput.safeParse({ name: "a", expiresAt: "2030-01-01T00:00:00Z" }).success,
    ).toBe(true);
    expect(CreateTokenInput.safeParse({ name: "a", expiresAt: "soon" }).success).toBe(false);
    expect(CreateTokenInput.safeParse({ name: "a", expiresAt: null }).success).toBe(false);
    expect(UpdateTokenInput.safeParse({ id: "abc", expiresAt: null }).success).toBe(true);
  });

  test("list paging takes limit from a query string, within bounds", () => {
    expect(ListTeamsInput.parse({})).toEqual({ limit: 100 });
    expect(ListTeamsInput.parse({ limit: "5" })).toEqual({ limit: 5 });
    expect(ListTeamsInput.safeParse({ limit: "0" }).success).toBe(false);
    expect(ListTeamsInput.safeParse({ limit: "1001" }).success).toBe(false);
  });
});

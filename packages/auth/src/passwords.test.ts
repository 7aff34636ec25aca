import { describe, expect, test } from "vitest";
import { hashPassword, passwordProblem, verifyPassword } from "./passwords";

describe("passwords", () => {
  test("a hash verifies its own password only, and never holds it", async () => {
    const hash = await hashPassword("correct horse battery staple");
    expect(hash).toMatch(/^scrypt\$15\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(hash).not.toContain("horse");
    expect(await verifyPassword("correct horse battery staple", hash)).toBe(true);
    expect(await verifyPassword("correct horse battery stapler", hash)).toBe(false);
    expect(await hashPassword("correct horse battery staple")).not.toBe(hash);
  });

  test("long passwords count every character (no 72-byte truncation)", async () => {
    const base = "x".repeat(100);
    const hash = await hashPassword(`${base}a`);
    expect(await verifyPassword(`${base}b`, hash)).toBe(false);
  });

  test("no hash (an unknown user) never verifies", async () => {
    expect(await verifyPassword("anything at all", null)).toBe(false);
    expect(await verifyPassword("anything at all", undefined)).toBe(false);
    expect(await verifyPassword("anything", "not-a-hash")).toBe(false);
  });

  test("too short, or the user's own names, is a problem", () => {
    const user = { username: "ada", name: "Ada Lovelace", email: "countess@example.com" };
    expect(passwordProblem("short", user)).toMatch(/at least 8/);
    expect(passwordProblem("ADA LOVELACE", user)).toMatch(/username, name or email/);
    expect(passwordProblem("the countess rules", user)).toMatch(/username, name or email/);
    expect(passwordProblem("analytical engine", user)).toBeUndefined();
  });
});

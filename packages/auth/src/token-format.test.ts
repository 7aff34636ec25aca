import { describe, expect, test } from "vitest";
import { bearerToken, generateToken, parseToken } from "./token-format";

describe("token format", () => {
  test("a generated token has the prefix, 36 base62 characters, and parses back", () => {
    const token = generateToken("personalAccessToken");
    expect(token).toMatch(/^fpp_[0-9A-Za-z]{36}$/);
    expect(parseToken(token)).toBe("personalAccessToken");
  });

  test("tokens are unique", () => {
    const tokens = new Set(
      Array.from({ length: 1000 }, () => generateToken("personalAccessToken")),
    );
    expect(tokens.size).toBe(1000);
  });

  test("any single changed character fails the checksum", () => {
    const token = generateToken("personalAccessToken");
    for (let i = 4; i < token.length; i++) {
      const swapped = token[i] === "a" ? "b" : "a";
      const typo = token.slice(0, i) + swapped + token.slice(i + 1);
      expect(parseToken(typo), `position ${i}`).toBeUndefined();
    }
  });

  test("wrong prefix, length or alphabet is refused", () => {
    const token = generateToken("personalAccessToken");
    expect(parseToken(`ffp${token.slice(3)}`)).toBeUndefined();
    expect(parseToken(token.slice(0, -1))).toBeUndefined();
    expect(parseToken(`${token}x`)).toBeUndefined();
    expect(parseToken(`${token.slice(0, 10)}-${token.slice(11)}`)).toBeUndefined();
    expect(parseToken("")).toBeUndefined();
  });

  test("bearerToken takes exactly `Bearer <token>`", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer abc")).toBeUndefined();
    expect(bearerToken("Bearer  abc")).toBeUndefined();
    expect(bearerToken("Bearer a b")).toBeUndefined();
    expect(bearerToken("Bearer ")).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });
});

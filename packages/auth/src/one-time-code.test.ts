import { describe, expect, test } from "vitest";
import { generateOneTimeCode, isOneTimeCode, oneTimeCodeFromBearer } from "./one-time-code";

const bearer = (text: string) => `Bearer ${Buffer.from(text).toString("base64")}`;

describe("device one-time codes", () => {
  test("a code is four known words joined by '-', long enough for the agent (8+)", () => {
    const code = generateOneTimeCode();
    expect(code).toMatch(/^[a-z]{3,8}(-[a-z]{3,8}){3}$/);
    expect(code.length).toBeGreaterThanOrEqual(8);
    expect(isOneTimeCode(code)).toBe(true);
  });

  test("codes are unique", () => {
    const codes = new Set(Array.from({ length: 1000 }, () => generateOneTimeCode()));
    expect(codes.size).toBe(1000);
  });

  test("the agent's bearer (base64 of the code) gives the code back", () => {
    const code = generateOneTimeCode();
    expect(oneTimeCodeFromBearer(bearer(code))).toBe(code);
  });

  test("anything else is not a code: wrong words, count, case, encoding or scheme", () => {
    const code = generateOneTimeCode();
    const words = code.split("-");
    expect(oneTimeCodeFromBearer(bearer(words.slice(0, 3).join("-")))).toBeUndefined();
    expect(oneTimeCodeFromBearer(bearer(`${code}-${words[0]}`))).toBeUndefined();
    expect(oneTimeCodeFromBearer(bearer(code.toUpperCase()))).toBeUndefined();
    expect(oneTimeCodeFromBearer(bearer(["zzzz", ...words.slice(1)].join("-")))).toBeUndefined();
    expect(oneTimeCodeFromBearer(bearer(words.join("_")))).toBeUndefined();
    // The code itself, not encoded; its encoding with junk the decoder would skip.
    expect(oneTimeCodeFromBearer(`Bearer ${code}`)).toBeUndefined();
    const encoded = Buffer.from(code).toString("base64");
    expect(
      oneTimeCodeFromBearer(`Bearer ${encoded.slice(0, 4)}!${encoded.slice(4)}`),
    ).toBeUndefined();
    expect(oneTimeCodeFromBearer(`bearer ${encoded}`)).toBeUndefined();
    expect(oneTimeCodeFromBearer(undefined)).toBeUndefined();
  });
});

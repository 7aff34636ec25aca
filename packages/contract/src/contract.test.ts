import { describe, expect, test } from "vitest";
import { z } from "zod";
import * as contract from "./index";
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

describe("the storable-text rule", () => {
  type Def = { type: string; [key: string]: any };
  const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

  /** Every string schema inside an input schema, with its dotted path. */
  function strings(schema: unknown, path: string): { path: string; def: Def }[] {
    const def = defOf(schema);
    switch (def.type) {
      case "string":
        return [{ path, def }];
      case "object":
        return Object.entries(def.shape as Record<string, unknown>).flatMap(([key, field]) =>
          strings(field, path ? `${path}.${key}` : key),
        );
      case "optional":
      case "nullable":
      case "default":
      case "prefault":
      case "readonly":
      case "nonoptional":
        return strings(def.innerType, path);
      case "union":
        return (def.options as unknown[]).flatMap((option) => strings(option, path));
      case "array":
        return strings(def.element, `${path}[]`);
      case "pipe":
        return [...strings(def.in, path), ...strings(def.out, path)];
      default:
        return [];
    }
  }

  const inputs = Object.entries(contract).filter(
    ([name, value]) => name.endsWith("Input") && value instanceof z.ZodType,
  );

  test("every text field of every input carries it, and a bound on its length", () => {
    expect(inputs.length).toBeGreaterThan(5);
    let checked = 0;
    for (const [name, schema] of inputs) {
      for (const { path, def } of strings(schema, "")) {
        const checks = (def.checks ?? []) as unknown[];
        expect(checks, `${name}.${path}`).toContain(contract.storableText);
        const kinds = checks.map((check) => defOf(check));
        const bounded = kinds.some(
          (check: Def) =>
            check.check === "max_length" ||
            (check.check === "string_format" && check.format === "datetime"),
        );
        expect(bounded, `${name}.${path} has no maximum length`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  test("NUL and unpaired surrogates are refused; everything else round-trips", () => {
    for (const bad of ["a\u0000b", "\ud800", "x\udc00", "\udbff\u0041"]) {
      const result = contract.CreateTeamInput.safeParse({ name: bad });
      expect(result.success, JSON.stringify(bad)).toBe(false);
      expect(result.error?.issues).toEqual([
        expect.objectContaining({
          path: ["name"],
          message: expect.stringMatching(/cannot be stored/),
        }),
      ]);
    }
    const fine = "Zoë 🚀 e\u0301 שלום\t\uffff\ud83d\ude00";
    expect(contract.CreateTeamInput.parse({ name: fine }).name).toBe(fine);
  });
});

// Checks that several schemas refine with, kept out of the package's exports: what PostgreSQL's
// jsonb can store, and lists whose names are each given once.
import type { z } from "zod";
import { isStorableText } from "./common";

/**
 * Checks a JSON value inside a refinement: every key and string storable (PostgreSQL's jsonb
 * refuses NUL and lone surrogates), nested at most `depth` deep. Reports the first fault at its
 * own path, and says whether there was none. The catalogue's free-form objects and the snapshots'
 * flows and settings share it.
 */
export function checkStorableJson(value: unknown, ctx: z.RefinementCtx, depth: number): boolean {
  const walk = (node: unknown, path: (string | number)[]): boolean => {
    if (typeof node === "string") {
      if (isStorableText(node)) return true;
      ctx.addIssue({
        code: "custom",
        path,
        message: "Contains a character that cannot be stored (NUL or an unpaired surrogate)",
      });
      return false;
    }
    if (node === null || typeof node !== "object") return true;
    if (path.length >= depth) {
      ctx.addIssue({ code: "custom", path, message: `Nested deeper than ${depth}` });
      return false;
    }
    if (Array.isArray(node)) return node.every((item, i) => walk(item, [...path, i]));
    return Object.entries(node).every(([key, item]) => {
      if (!isStorableText(key)) {
        ctx.addIssue({
          code: "custom",
          path,
          message: "A key contains a character that cannot be stored",
        });
        return false;
      }
      return walk(item, [...path, key]);
    });
  };
  return walk(value, []);
}

/** A list of named things (variables) in which each name is given once. */
export function eachNameOnce(items: { name: string }[], ctx: z.RefinementCtx) {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item.name)) {
      ctx.addIssue({ code: "custom", path: [i, "name"], message: "Given twice" });
    }
    seen.add(item.name);
  });
}

// What the published build imports: the declarations and the code need tRPC's packages, the
// contract and the SSE parser the event stream's reader uses (its own dependencies), nothing of the
// server (its router's type is written out in full by the build).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const dist = join(import.meta.dirname, "../dist");
const ALLOWED = [
  "@trpc/client",
  "@trpc/server",
  "@flowplane/contract",
  "zod",
  "eventsource-parser",
];

/** Every module a file names: `from "…"`, `import "…"`, `import("…")`, `require("…")`. */
function imported(file: string): string[] {
  const text = readFileSync(join(dist, file), "utf8");
  const names = [
    ...text.matchAll(/\bfrom\s*["']([^"']+)["']/g),
    ...text.matchAll(/\bimport\s*\(?\s*["']([^"']+)["']/g),
    ...text.matchAll(/\brequire\s*\(\s*["']([^"']+)["']/g),
  ].map((match) => match[1]!);
  return [...new Set(names)].sort();
}

describe("the published build", () => {
  beforeAll(() => {
    if (!existsSync(join(dist, "index.d.ts"))) {
      throw new Error("packages/client is not built: run `pnpm build` in it first");
    }
  });

  it.each(["index.d.ts", "index.js"])(
    "%s imports only tRPC's packages, the contract and the SSE parser",
    (file) => {
      const names = imported(file);
      expect(names.filter((name) => !ALLOWED.includes(name))).toEqual([]);
      expect(names).toContain("@trpc/client");
    },
  );

  it("declares every area's procedures, with no server type left", () => {
    const text = readFileSync(join(dist, "index.d.ts"), "utf8");
    for (const name of ["Kysely", "Db", "Context", "FastifyBaseLogger", "AppRouter"]) {
      expect(text).not.toMatch(new RegExp(`\\b${name}\\b`));
    }
    expect(text).toMatch(/\bteam: \{/);
    expect(text).toMatch(/\bbyId: TRPCQueryProcedure</);
  });
});

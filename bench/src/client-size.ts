// `pnpm --filter @flowplane/bench client-size`: how much @flowplane/client adds to a program,
// minified and gzipped: its own code (dist/index.js, its dependencies left to the program), with
// tRPC's client, and everything a browser's bundle of it holds (the contract, imported for its
// types only, adds nothing).
// Builds the client first (turbo: cached when nothing changed). The figures are in docs/clients.md.
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "tsup";
import { ROOT } from "./machine";

const client = join(ROOT, "packages/client");
execFileSync(
  "pnpm",
  ["exec", "turbo", "run", "build", "--filter=@flowplane/client", "--output-logs=errors-only"],
  { cwd: ROOT, stdio: "inherit" },
);

const out = await mkdtemp(join(tmpdir(), "flowplane-client-size-"));
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
try {
  const cases = [
    { name: "own code (dist/index.js)", external: [/^[^./]/] },
    { name: "with @trpc/client", external: [/^@flowplane\//, /^zod/] },
    { name: "everything (the contract is imported for types only)", external: [] },
  ];
  console.log("@flowplane/client, minified | minified + gzip");
  for (const [index, { name, external }] of cases.entries()) {
    const outDir = join(out, String(index));
    await build({
      entry: [join(client, "dist/index.js")],
      outDir,
      format: "esm",
      platform: "browser",
      target: "es2022",
      minify: true,
      treeshake: true,
      dts: false,
      silent: true,
      config: false,
      external,
    });
    const code = await readFile(join(outDir, "index.js"));
    console.log(`  ${name}: ${kb(code.length)} | ${kb(gzipSync(code, { level: 9 }).length)}`);
  }
} finally {
  await rm(out, { recursive: true, force: true });
}

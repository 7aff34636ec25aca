// The published build: ESM and type declarations.
import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  format: "esm",
  target: "node20",
  clean: true,
  // tsup's declaration build sets `baseUrl`, which TypeScript 6 reports as deprecated.
  dts: { compilerOptions: { ignoreDeprecations: "6.0" } },
});

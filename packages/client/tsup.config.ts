// The published build: ESM, and one declaration file. Its router type is the one the build writes
// out in full (scripts/router-types.ts, into .generated/), not src/router.ts's, which is computed
// from @flowplane/api's: the declarations then import nothing of the server.
import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  format: "esm",
  target: "es2022",
  platform: "neutral",
  clean: true,
  dts: {
    compilerOptions: {
      // tsup's declaration build sets `baseUrl`, which TypeScript 6 reports as deprecated.
      ignoreDeprecations: "6.0",
      paths: { "#router": ["./.generated/router.ts"] },
    },
  },
});

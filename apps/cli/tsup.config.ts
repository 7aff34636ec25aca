// The workspace's packages are TypeScript source, so the one the CLI uses at run time
// (@flowplane/contract) is bundled in; third-party packages stay external.
import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/main.ts", "src/index.ts"],
  format: "esm",
  target: "node20",
  platform: "node",
  clean: true,
  noExternal: [/^@flowplane\//],
});

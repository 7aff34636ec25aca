// The server is bundled with its workspace packages (they are TypeScript source, not built);
// third-party packages stay external and load from node_modules.
import { defineConfig } from "tsup";

export default defineConfig({
  // The server, and the operator's commands (`pnpm backup`, `pnpm restore`).
  entry: { main: "src/main.ts", operations: "src/operations/main.ts" },
  format: "esm",
  target: "node20",
  platform: "node",
  clean: true,
  sourcemap: true,
  noExternal: [/^@flowplane\//],
});

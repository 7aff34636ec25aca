// What `npm i -g @flowplane/cli` installs. Bundled in: the workspace's packages, which are
// TypeScript source (those the CLI uses at run time: @flowplane/client, @flowplane/contract), and
// tRPC's client, whose package requires `typescript` as a peer: npm installs peers, so leaving it external would
// put the TypeScript compiler (tens of MB) into every install of a command that never runs it.
// The other third-party packages (commander, zod) stay external: the package's `dependencies`.
import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/main.ts", "src/index.ts"],
  format: "esm",
  target: "node20",
  platform: "node",
  clean: true,
  noExternal: [/^@flowplane\//, /^@trpc\//],
});

// `pnpm release` (after `pnpm changeset version` and its commit): builds the published packages
// and publishes those whose version the registry does not have yet (`changeset publish`, which
// also tags them). With provenance where it can be had: npm signs it with the CI's OIDC identity
// (GitHub Actions' id-token), so it is asked for in CI with one (or when NPM_CONFIG_PROVENANCE is
// set), and not on a person's machine, where publishing with it fails.
import { execFileSync } from "node:child_process";
import { buildPublished, publishedPackages, ROOT } from "./published.mjs";

const env = { ...process.env };
if (env.NPM_CONFIG_PROVENANCE === undefined && env.CI && env.ACTIONS_ID_TOKEN_REQUEST_URL) {
  env.NPM_CONFIG_PROVENANCE = "true";
}
console.log(`provenance: ${env.NPM_CONFIG_PROVENANCE === "true" ? "on" : "off (no CI identity)"}`);

buildPublished(publishedPackages());
execFileSync("pnpm", ["exec", "changeset", "publish"], { cwd: ROOT, stdio: "inherit", env });

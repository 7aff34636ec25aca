// `pnpm release:check` (CI, after the type check): the release as a dry run. Builds the published
// packages, runs `pnpm publish -r --dry-run`, fails when a published package changed without a
// changeset, and checks each package's tarball (no tests, no source maps, no secrets; only dist/,
// README, LICENSE, CHANGELOG and package.json).
//
// The changeset check compares with where the branch left the base branch (the merge base of HEAD
// and origin/main, or of RELEASE_BASE when set): a branch's own changes must come with their
// changesets. A clone with no such ref (no remote, or a shallow one without the base) has nothing
// to compare with, and the check says so and is skipped; on main itself the merge base is HEAD and
// nothing is compared. (The commit that last changed .changeset/ was the other candidate, but
// every commit after the last changeset would then need one of its own, which is not the rule.)
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildPublished, pack, publishedPackages, ROOT, tarballProblems } from "./published.mjs";

const run = (command, args, options = {}) =>
  execFileSync(command, args, { cwd: ROOT, stdio: "inherit", ...options });
const git = (...args) =>
  execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });

const packages = publishedPackages();
console.log(`release check of ${packages.map(({ name }) => name).join(", ")}`);
buildPublished(packages);

console.log("== pnpm publish -r --dry-run");
run("pnpm", [
  "publish",
  "-r",
  "--dry-run",
  "--no-git-checks",
  ...packages.map(({ name }) => `--filter=${name}`),
]);

console.log("== every published package's change has a changeset");
const base = process.env.RELEASE_BASE ?? "origin/main";
let since;
try {
  since = git("merge-base", "HEAD", base).trim();
} catch {
  console.log(`no ${base} to compare with (no remote, or a shallow clone): check skipped`);
}
if (since) run("pnpm", ["exec", "changeset", "status", `--since=${since}`]);

console.log("== the tarballs");
const into = mkdtempSync(join(tmpdir(), "flowplane-release-check-"));
let failed = false;
try {
  const tarballs = pack(packages, into);
  for (const { name } of packages) {
    const { files, problems } = tarballProblems(tarballs[name]);
    console.log(`${name}: ${files.length} files${problems.length ? "" : ", all fine"}`);
    for (const problem of problems) console.error(`  ${problem}`);
    failed ||= problems.length > 0;
  }
} finally {
  rmSync(into, { recursive: true, force: true });
}
if (failed) process.exit(1);

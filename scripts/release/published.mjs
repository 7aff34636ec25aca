// The workspace's published packages (those not `private`), their tarballs, and the rules a
// tarball's files must keep. Shared by `pnpm release` and `pnpm release:check`.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "../..");

/** @returns {{ name: string, path: string }[]} */
export function publishedPackages() {
  const all = JSON.parse(
    execFileSync("pnpm", ["-r", "ls", "--json", "--depth", "-1"], { cwd: ROOT, encoding: "utf8" }),
  );
  return all.filter((pkg) => !pkg.private).map(({ name, path }) => ({ name, path }));
}

/** turbo's filter arguments naming the published packages. */
export const filters = (packages) => packages.map(({ name }) => `--filter=${name}`);

/** Builds the published packages (and what they are built from), turbo's cache allowing. */
export function buildPublished(packages) {
  execFileSync(
    "pnpm",
    ["exec", "turbo", "run", "build", ...filters(packages), "--output-logs=errors-only"],
    { cwd: ROOT, stdio: "inherit" },
  );
}

/** `pnpm pack`s each package into `into`; the tarballs' paths, by package name. */
export function pack(packages, into) {
  const tarballs = {};
  for (const { name, path } of packages) {
    const before = new Set(readdirSync(into));
    execFileSync("pnpm", ["pack", "--pack-destination", into], { cwd: path, stdio: "ignore" });
    const made = readdirSync(into).filter((file) => !before.has(file) && file.endsWith(".tgz"));
    if (made.length !== 1) throw new Error(`pnpm pack of ${name} made ${made.length} tarballs`);
    tarballs[name] = join(into, made[0]);
  }
  return tarballs;
}

/** The files a tarball may hold: the build, the readme, the licence, the changelog, the manifest. */
const ALLOWED =
  /^package\/(dist\/.+|README(\.md)?|LICENSE(\.md|\.txt)?|CHANGELOG\.md|package\.json)$/;

/** What a tarball must not hold, each with the reason given when it does. */
const FORBIDDEN = [
  [/\.(test|spec)\.[cm]?[jt]sx?$/, "a test"],
  [/(^|\/)(test|tests|__tests__)\//, "a test folder"],
  [/\.map$/, "a source map (of code that is not published as source)"],
  [/(^|\/)\.env(\.|$)/, "an environment file"],
  [/\.(pem|key|p12|pfx)$/, "a key or certificate"],
  [/(^|\/)\.npmrc$/, "an npm configuration (it may hold a registry token)"],
];

/** Secrets in a file's text: the platform's own tokens, a private key, an npm token. */
const SECRETS = [
  [/\bfp[a-z]_[A-Za-z0-9]{36}\b/, "a Flowplane token"],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, "a private key"],
  [/\bnpm_[A-Za-z0-9]{36}\b/, "an npm token"],
];

/** The tarball's files that break the rules, each with why: none when it is fine. */
export function tarballProblems(tarball) {
  const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" })
    .split("\n")
    .filter((file) => file && !file.endsWith("/"));
  const problems = [];
  for (const file of files) {
    const forbidden = FORBIDDEN.find(([pattern]) => pattern.test(file));
    if (forbidden) problems.push(`${file}: ${forbidden[1]}`);
    else if (!ALLOWED.test(file)) {
      problems.push(`${file}: not dist/, README, LICENSE, CHANGELOG or package.json`);
    }
  }
  const texts = execFileSync("tar", ["-xzOf", tarball], { encoding: "utf8", maxBuffer: 1 << 28 });
  for (const [pattern, what] of SECRETS) {
    if (pattern.test(texts)) problems.push(`${what} in its files`);
  }
  return { files, problems };
}

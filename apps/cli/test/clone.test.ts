// `pnpm flowplane …` from the root of a clone, as the README has people run it: the root
// package.json's script builds the CLI when its sources changed (turbo's cache), then runs the
// built bin with the same arguments, streams and exit status.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import { processEnv } from "../src/env";
import type { Outcome } from "./cli";

const root = fileURLToPath(new URL("../../../", import.meta.url));

/** `pnpm <args>` at the root, with only what pnpm needs from this environment, and `env`. */
function pnpm(args: readonly string[], env: Record<string, string> = {}): Promise<Outcome> {
  const { PATH, HOME } = processEnv();
  return new Promise((resolve, reject) => {
    const child = spawn("pnpm", args, {
      cwd: root,
      env: { ...(PATH && { PATH }), ...(HOME && { HOME }), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status: status ?? -1, stdout, stderr }));
  });
}

// The first run builds the CLI unless turbo has this build cached: a hook's time limit, not a test's.
// A clean clone builds the contract and the CLI with their type declarations: 10-20 s on a quiet
// 2-core machine, past two minutes on one saturated by other work (a clean-clone CI run at load
// 14), so the bound is against a hang, not a guess at the build's speed.
let first: Outcome;
beforeAll(async () => {
  first = await pnpm(["--silent", "flowplane", "--version"]);
}, 600_000);

describe("pnpm flowplane from a clone", () => {
  it("prints only the command's output on stdout, even when it builds first", () => {
    expect(first).toMatchObject({ status: 0, stdout: `${packageJson.version}\n` });
  });

  it("--help shows the CLI's help with its examples (exit 0)", async () => {
    const help = await pnpm(["flowplane", "--help"]);

    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Usage: flowplane [options] [command]");
    expect(help.stdout).toContain("\nExamples:\n");
    expect(help.stdout).toContain("  flowplane tokens revoke ci\n");
  });

  it("passes the arguments and the environment through, and returns the CLI's exit status", async () => {
    const [usage, failure] = await Promise.all([
      pnpm(["--silent", "flowplane", "login", "--token", "t", "--url", "a b"]),
      pnpm(["--silent", "flowplane", "whoami", "--json"], {
        FLOWPLANE_TOKEN: "t",
        FLOWPLANE_URL: "not-a-url",
      }),
    ]);

    expect(usage).toMatchObject({ status: 2, stdout: "" });
    expect(usage.stderr).toContain("error: option '--url <url>' argument 'a b' is invalid.");
    expect(failure).toMatchObject({ status: 1, stdout: "" });
    expect(failure.stderr).toMatch(/^error: FLOWPLANE_URL: .*\(invalid_config\)\n$/m);
  });
});

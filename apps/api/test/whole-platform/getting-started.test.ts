// docs/getting-started.md, walked as a newcomer walks it: its three ways one after the other against
// ONE platform with real Node-RED, on a port of its own choosing (not 3000), in a clone whose
// `.data` is the platform's DATA_DIR. The browser way in Chromium, through the real pages (sign-in,
// the new password, a team, an application, an instance, its editor, whose own Import dialog and
// Deploy button deploy the guide's flow); then the guide's `sh` blocks of "With the CLI", run with
// bash as written (`pnpm -s flowplane`, the CLI built and run from the clone); then those of "With
// curl". Every way's flow must answer GET /hello. The commands are the guide's, so guide and test
// cannot drift.
// The browser's globals, for the code page.evaluate runs in the page.
/// <reference lib="dom" />
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { browserMissing, launchBrowser, openBrowser, signInOnPage } from "../support/browser";
import { inheritedEnv } from "../support/env";
import { startServer, type TestServer } from "../support/harness";

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
const GUIDE = join(ROOT, "docs/getting-started.md");

/** The `sh` blocks of the guide's section under `## <heading>`, in order. */
function blocksOf(guide: string, heading: string): string[] {
  const start = guide.indexOf(`\n## ${heading}\n`);
  expect(start, `the guide's section "${heading}"`).toBeGreaterThan(0);
  const end = guide.indexOf("\n## ", start + 1);
  const section = guide.slice(start, end < 0 ? undefined : end);
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
  expect(blocks.length, `sh blocks under "${heading}"`).toBeGreaterThan(0);
  return blocks;
}

let server: TestServer;
let guide: string;
/** Where the guide's commands run: a clone's root, whose `.data` is the server's DATA_DIR. */
let clone: string;
/** The user's environment: their own config directory (where `flowplane login` stores its login). */
let env: Record<string, string>;

/** A way's blocks, run as one bash script in the clone (the flow's file written first). */
function script(heading: string) {
  const script = [...blocksOf(guide, "The flow"), ...blocksOf(guide, heading)].join("\n");
  return run("bash", ["-euo", "pipefail", "-c", script], { cwd: clone, env, timeout: 150_000 });
}

/** A way walked to its end: what it printed. */
async function walk(heading: string) {
  const { stdout, stderr } = await script(heading).catch(
    (error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`${heading}: ${error.message}\n${error.stdout ?? ""}\n${error.stderr ?? ""}`);
    },
  );
  // The admin's token is read from a file by every way, and printed by none.
  expect(stdout + stderr).not.toContain(server.adminToken);
  return stdout;
}

beforeAll(async () => {
  // Instances run for real, and the server listens on a free port: BASE_URL is that address.
  server = await startServer({ instances: true });
  expect(new URL(server.url).port).not.toBe("3000");
  guide = await readFile(GUIDE, "utf8");
  clone = await mkdtemp(join(tmpdir(), "flowplane-getting-started-"));
  await symlink(server.dataDir, join(clone, ".data"), "dir");
  // `pnpm -s flowplane` is the root package's script, which runs apps/cli/scripts/from-clone.mjs:
  // it builds the CLI in the real clone (the script's own location) and runs it.
  await copyFile(join(ROOT, "package.json"), join(clone, "package.json"));
  await symlink(join(ROOT, "apps"), join(clone, "apps"), "dir");
  await mkdir(join(clone, "config"));
  env = { ...inheritedEnv, XDG_CONFIG_HOME: join(clone, "config") };
}, 60_000);
afterAll(async () => {
  await server?.close();
  if (clone) await rm(clone, { recursive: true, force: true });
});

describe("docs/getting-started.md, its three ways in a row on one platform", () => {
  test("the platform says where it is in .data/base-url: its port, not 3000", async () => {
    expect((await readFile(join(clone, ".data/base-url"), "utf8")).trim()).toBe(server.url);
  });

  describe.skipIf(browserMissing)("in the browser", () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser?.close();
    });

    test("admin signs in, chooses a password, makes Production, Line 1 and line-one, and deploys in its editor", async () => {
      const base = (await readFile(join(clone, ".data/base-url"), "utf8")).trim();
      const passwordFile = join(clone, ".data/initial-admin-password");
      const password = (await readFile(passwordFile, "utf8")).trim();
      const { context, page, problems } = await openBrowser(browser);
      page.setDefaultTimeout(30_000);

      // 1. Sign in; the first password is expired: a new one, and the file is gone.
      await page.goto(`${base}/sign-in`);
      await signInOnPage(page, "admin", password);
      await page.waitForURL(/\/settings\/password/);
      await page.getByLabel("New password", { exact: true }).fill("a getting started phrase");
      await page.getByLabel("Repeat the new password").fill("a getting started phrase");
      await page.getByRole("button", { name: "Save and continue" }).click();
      await page.waitForURL(`${base}/teams`);
      await expect(stat(passwordFile)).rejects.toMatchObject({ code: "ENOENT" });

      // 2–3. The team, the application, the instance, running.
      await page.getByLabel("Team name").fill("Production");
      await page.getByRole("button", { name: "Create team" }).click();
      await page.waitForURL(/\/teams\/\w+\?done=created$/);
      const teamUrl = page.url().replace(/\?.*$/, "");
      await page.getByLabel("Application name").fill("Line 1");
      await page.getByRole("button", { name: "Create application" }).click();
      await page.waitForURL(`${teamUrl}?done=application`);
      const application = page.getByRole("region", { name: "Line 1" });
      await application.getByLabel("Instance name").fill("line-one");
      await application.getByRole("button", { name: "Create instance" }).click();
      await page.waitForURL(`${teamUrl}?done=instance`);
      const row = page.getByRole("row", { name: /line-one/ });
      await row.locator(".state-running").waitFor({ timeout: 90_000 });

      // 4. The editor, on a host of its own at the platform's port, signed in through the platform.
      const editor = await row.getByRole("link", { name: /Open editor/ }).getAttribute("href");
      expect(editor).toBe(`http://line-one.localhost:${new URL(base).port}`);
      await row.getByRole("link", { name: /Open editor/ }).click();
      await page.locator("#red-ui-header-button-deploy").waitFor({ timeout: 60_000 });
      expect(page.url().startsWith(`${editor}/`)).toBe(true);

      // 5. The guide's hello.json, imported with the editor's Import dialog, and deployed.
      const flow = /cat > hello\.json <<'EOF'\n([\s\S]*?)\nEOF/.exec(
        blocksOf(guide, "The flow")[0]!,
      )![1]!;
      await page.evaluate(() =>
        (
          window as unknown as { RED: { actions: { invoke(name: string): void } } }
        ).RED.actions.invoke("core:show-import-dialog"),
      );
      const text = page.locator("#red-ui-clipboard-dialog-import-text");
      await text.fill(flow);
      // The dialog checks the JSON as it is typed: a key typed after the paste.
      await text.press("End");
      await page.locator("#red-ui-clipboard-dialog-ok").click();
      await page.locator("#red-ui-workspace-chart").click({ position: { x: 200, y: 200 } });
      await page.locator("#red-ui-header-button-deploy").click();
      await page.getByText("Successfully deployed").waitFor({ timeout: 30_000 });

      // 6. The flow answers at the editor's address (asked until it does, 30 s at most).
      let answer = "";
      for (let i = 0; i < 30 && answer !== "Hello from Flowplane"; i++) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
        const reply = await page.goto(`${editor}/hello`);
        answer = (await reply?.text()) ?? "";
      }
      expect(answer).toBe("Hello from Flowplane");
      expect(problems).toEqual([]);
      await context.close();
    }, 150_000);
  });

  test("with the CLI: the guide's commands, pnpm -s flowplane as written, make line-two whose flow answers", async () => {
    const stdout = await walk("With the CLI");
    expect(stdout).toContain(`Logged in to ${server.url} as admin (Administrator).`);
    expect(stdout).toContain("Editor: http://line-two.localhost:");
    expect(stdout.trim().split("\n").at(-1)).toBe("Hello from Flowplane");
  }, 180_000);

  test("with curl: the guide's commands make line-three whose flow answers, next to the others", async () => {
    const stdout = await walk("With curl");
    expect(stdout.trim().split("\n").at(-1)).toBe("Hello from Flowplane");
    const teams = await server.request("GET", "/api/v1/user/teams");
    expect(teams.body.teams.map((t: { name: string }) => t.name).sort()).toEqual(
      browserMissing ? ["Development", "Testing"] : ["Development", "Production", "Testing"],
    );
  }, 180_000);

  test("with curl, walked again: stops at once with the API's own message, and no stack trace", async () => {
    const started = Date.now();
    const failed = await script("With curl").then(
      () => undefined,
      (error: { code?: number; stdout: string; stderr: string }) => error,
    );
    expect(failed, "the second walk fails").toBeDefined();
    expect(failed!.code).not.toBe(0);
    // The names are taken: the API's refusal, as it says it, is what the reader sees.
    expect(failed!.stderr).toMatch(/"code":"\w+","error":"[^"]+"/);
    expect(failed!.stderr).not.toMatch(/\n\s+at |SyntaxError|TypeError/);
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);
});

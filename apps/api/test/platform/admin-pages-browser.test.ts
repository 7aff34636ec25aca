// The administrators' pages in a real browser (headless Chromium): an administrator reaches them
// from the Admin link, walks every tab (each page checked: labels, one heading, no sideways scroll
// at 375 px, no serious accessibility violation), creates and suspends a user, creates, changes
// and deletes an instance type (the deletion asked first by the page's script), and saves the
// settings; a team owner who is not an administrator sees no Admin link and gets the refusal page.
// With UPDATE_SCREENSHOTS=1, screenshots go to docs/screenshots/.
/// <reference lib="dom" />
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  browserMissing,
  checkPage,
  closeServerAndBrowser,
  openBrowser,
  screenshot,
  serverAndBrowser,
  signInOnPage,
} from "../support/browser";
import { type TestServer } from "../support/harness";

/**
 * A fresh browser signed in from the sign-in page, landing on `path`; slow replies waited for
 * longer than the usual 10 s (a loaded machine).
 */
async function signedIn(browser: Browser, server: TestServer, user: Person, path: string) {
  const opened = await openBrowser(browser);
  opened.page.setDefaultTimeout(30_000);
  await opened.page.goto(`${server.url}/sign-in?next=${encodeURIComponent(path)}`);
  await signInOnPage(opened.page, user.username, user.password);
  await opened.page.waitForURL(`${server.url}${path}`);
  return opened;
}

type Person = { username: string; password: string };

const TABS: [string, string][] = [
  ["Overview", "/admin"],
  ["Users", "/admin/users"],
  ["Teams", "/admin/teams"],
  ["Team types", "/admin/team-types"],
  ["Instance types", "/admin/instance-types"],
  ["Stacks", "/admin/stacks"],
  ["Templates", "/admin/templates"],
  ["Settings", "/admin/settings"],
  ["Audit log", "/admin/audit-log"],
];

describe.skipIf(browserMissing)("the administrators' pages in Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    ({ server, browser } = await serverAndBrowser());
  });
  afterAll(() => closeServerAndBrowser(server, browser));

  describe("an administrator", () => {
    let context: BrowserContext;
    let page: Page;
    let problems: string[];
    const tabs = () => page.getByRole("navigation", { name: "Administration" });
    beforeAll(async () => {
      const admin = await server.userWithPassword({ admin: true, name: "Ada Admin" });
      ({ context, page, problems } = await signedIn(browser, server, admin, "/teams"));
    });
    afterAll(async () => {
      expect(problems).toEqual([]);
      await context.close();
    });

    test("reaches the pages from the Admin link and walks every tab", async () => {
      await page
        .getByRole("navigation", { name: "Main" })
        .getByRole("link", { name: "Admin" })
        .click();
      await page.waitForURL(`${server.url}/admin`);
      for (const [label, path] of TABS) {
        await tabs().getByRole("link", { name: label, exact: true }).click();
        await page.waitForURL(`${server.url}${path}`);
        await checkPage(page);
      }
    });

    test("creates a user, finds it and suspends it", async () => {
      await page.goto(`${server.url}/admin/users`);
      await page.getByLabel("Username", { exact: true }).fill("grace");
      await page.getByLabel("Name", { exact: true }).fill("Grace Hopper");
      await page.getByLabel("Email (optional)").fill("grace@example.com");
      await page.getByLabel("Password", { exact: true }).fill("a long enough password");
      await page.getByRole("button", { name: "Create the user" }).click();
      await page.waitForURL(/\/admin\/users\?done=created$/);
      await page.getByLabel("Search").fill("GRACE");
      await page.getByRole("button", { name: "Search" }).click();
      await page.waitForURL(/\/admin\/users\?q=GRACE$/);
      const row = page.getByRole("row", { name: /grace/ });
      await row.getByRole("button", { name: /Suspend/ }).click();
      await page.waitForURL(/done=suspended$/);
      expect(await page.getByRole("row", { name: /grace/ }).innerText()).toContain("suspended");
      await checkPage(page);
      await screenshot(page, "admin-users");
    });

    test("creates, changes and deletes an instance type; bad JSON is the API's error", async () => {
      await page.goto(`${server.url}/admin/instance-types`);
      await page.getByLabel("Name", { exact: true }).fill("Large");
      await page.getByLabel("Order (optional)").fill("3");
      await page.getByLabel("Properties (JSON, optional)").fill('{"cpu": 2}');
      await page.getByRole("button", { name: "Create the instance type" }).click();
      await page.waitForURL(/\/admin\/instance-types\/\w+\?done=created$/);
      await checkPage(page);
      await page.getByLabel("Properties (JSON, optional)").fill("{broken");
      await page.getByRole("button", { name: "Save" }).click();
      await page.locator('[role="alert"]').waitFor();
      await page.getByLabel("Properties (JSON, optional)").fill('{"cpu": 4}');
      await page.getByRole("button", { name: "Save" }).click();
      await page.waitForURL(/done=saved$/);
      await tabs().getByRole("link", { name: "Instance types" }).click();
      await page.waitForURL(`${server.url}/admin/instance-types`);
      await screenshot(page, "admin-instance-types");
      await page.getByRole("link", { name: "Large" }).click();
      page.once("dialog", (dialog) => void dialog.accept());
      await page.getByRole("button", { name: /Delete/ }).click();
      await page.waitForURL(/\/admin\/instance-types\?done=deleted$/);
      expect(await page.locator("main").innerText()).not.toContain("Large");
    });

    test("saves the settings, and finds the change in the audit log", async () => {
      await page.goto(`${server.url}/admin/settings`);
      await page.getByLabel("Anyone may create teams").uncheck();
      await page.getByRole("button", { name: "Save the settings" }).click();
      await page.waitForURL(/done=saved$/);
      expect(await page.getByLabel("Anyone may create teams").isChecked()).toBe(false);
      await screenshot(page, "admin-settings");
      await page.getByLabel("Anyone may create teams").check();
      await page.getByRole("button", { name: "Save the settings" }).click();
      await page.waitForURL(/done=saved$/);

      await tabs().getByRole("link", { name: "Audit log" }).click();
      await page.getByLabel("Event", { exact: true }).fill("platform.settings.updated");
      await page.getByRole("button", { name: "Filter" }).click();
      await page.waitForURL(/event=platform\.settings\.updated/);
      expect(await page.locator("tbody tr").count()).toBe(2);
    });
  });

  test("a team owner who is not an administrator gets the refusal page", async () => {
    const owner = await server.userWithPassword({ name: "Olive Owner" });
    const created = await server.request("POST", "/api/v1/teams", { body: { name: "Olive's" } });
    expect(created.status).toBe(200);
    const { context, page, problems } = await signedIn(browser, server, owner, "/teams");
    expect(await page.getByRole("link", { name: "Admin" }).count()).toBe(0);
    for (const path of ["/admin", "/admin/users", "/admin/settings"]) {
      const reply = await page.goto(`${server.url}${path}`);
      expect(reply?.status()).toBe(403);
      expect(await page.locator("h1").innerText()).toBe("Administrators only");
    }
    await checkPage(page);
    expect(problems).toEqual([]);
    await context.close();
  });
});

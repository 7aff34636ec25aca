// The pages in a real browser (headless Chromium): signing in, the Security page's token life
// cycle, the forced new password, the API viewer on the session alone, sign-out; under the pages'
// strict Content-Security-Policy, with a label on every field and no sideways scrolling on a
// phone. With UPDATE_SCREENSHOTS=1, screenshots of each page go to docs/screenshots/ (the README
// shows them).
// The browser's globals, for the code page.evaluate runs in the page.
/// <reference lib="dom" />
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  browserMissing,
  checkPage,
  closeServerAndBrowser,
  openBrowser as openContext,
  screenshot as shoot,
  serverAndBrowser,
  signInOnPage as signIn,
} from "../support/browser";
import { type TestServer } from "../support/harness";

describe.skipIf(browserMissing)("the pages in Chromium", () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    ({ server, browser } = await serverAndBrowser());
  });
  afterAll(() => closeServerAndBrowser(server, browser));

  const openBrowser = () => openContext(browser);

  test("a wrong password shows the error and keeps the username; then sign-in lands on Teams", async () => {
    const user = await server.userWithPassword();
    const { context, page, problems } = await openBrowser();
    await page.goto(`${server.url}/sign-in`);
    await checkPage(page);
    await shoot(page, "sign-in");

    await signIn(page, user.username, "not the password");
    await expect
      .poll(() => page.getByRole("alert").innerText())
      .toContain("Wrong username or password");
    expect(await page.getByLabel("Username or email").inputValue()).toBe(user.username);
    expect(await page.getByLabel("Password", { exact: true }).inputValue()).toBe("");
    await checkPage(page);
    await shoot(page, "sign-in-error");

    await page.getByLabel("Password", { exact: true }).fill(user.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/teams`);
    expect(await page.locator("h1").innerText()).toBe("Teams");
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  test("the Security page creates a token shown once with a copy button, and revokes it after a confirmation", async () => {
    const user = await server.userWithPassword({ name: "Grace Hopper" });
    const { context, page, problems } = await openBrowser();
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await page.goto(`${server.url}/settings/security`);
    await signIn(page, user.username, user.password);
    await page.waitForURL(`${server.url}/settings/security`);
    // A team to restrict the token to, created with the session as a page of ours would.
    const team = await page.evaluate(async () => {
      const reply = await fetch("/api/v1/teams", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Operations" }),
      });
      return (await reply.json()) as { id: string };
    });
    await page.reload();
    await page.getByLabel("Name", { exact: true }).fill("Deploy bot");
    const expiry = new Date(Date.now() + 5 * 86400_000).toISOString().slice(0, 10);
    await page.getByLabel("Expires on (optional)").fill(expiry);
    await page.getByLabel("Operations").check();
    await page.getByRole("button", { name: "Create token" }).click();

    const value = await page.getByLabel("Token value").inputValue();
    expect(value).toMatch(/^fpp_\w{36}$/);
    await page.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => page.locator("#copy-status").innerText()).toContain("Copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(value);
    await checkPage(page);
    await shoot(page, "security-new-token");

    const asToken = (path: string) =>
      fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${value}` } });
    expect((await asToken("/api/v1/user")).status).toBe(200);
    const teams = (await (await asToken("/api/v1/user/teams")).json()) as {
      teams: { id: string }[];
    };
    expect(teams.teams.map((t) => t.id)).toEqual([team.id]);

    // The row shows its scope; revoking asks first, and "cancel" keeps the token.
    const row = page.getByRole("row", { name: /Deploy bot/ });
    expect(await row.innerText()).toContain("Teams: Operations");
    page.once("dialog", (dialog) => void dialog.dismiss());
    await row.getByRole("button", { name: /Revoke/ }).click();
    expect((await asToken("/api/v1/user")).status).toBe(200);

    let question = "";
    page.once("dialog", (dialog) => {
      question = dialog.message();
      void dialog.accept();
    });
    await row.getByRole("button", { name: /Revoke/ }).click();
    await page.waitForURL(/done=revoked/);
    expect(question).toContain("Revoke the token “Deploy bot”?");
    expect(await page.getByRole("status").first().innerText()).toContain("The token is revoked.");
    expect(await page.getByRole("row", { name: /Deploy bot/ }).count()).toBe(0);
    expect(await page.content()).not.toContain(value);
    expect((await asToken("/api/v1/user")).status).toBe(401);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  test("the Profile page changes the name and shows the API's message for a weak password", async () => {
    const user = await server.userWithPassword({ name: "Grace Hopper" });
    const { context, page, problems } = await openBrowser();
    await page.goto(`${server.url}/settings/profile`);
    await signIn(page, user.username, user.password);
    await page.waitForURL(`${server.url}/settings/profile`);
    await page.getByLabel("Name", { exact: true }).fill("Rear Admiral Grace Hopper");
    await page.getByLabel("Email").fill("grace@example.com");
    await page.getByRole("button", { name: "Save profile" }).click();
    await page.waitForURL(/done=profile/);
    expect(await page.getByRole("status").innerText()).toContain("Your profile is saved.");

    await page.getByLabel("Current password").fill(user.password);
    await page.getByLabel("New password", { exact: true }).fill("grace@example.com!");
    await page.getByLabel("Repeat the new password").fill("grace@example.com!");
    await page.getByRole("button", { name: "Change password" }).click();
    await expect.poll(() => page.getByRole("alert").innerText()).toContain("Password is too weak");
    expect(
      await page.getByLabel("New password", { exact: true }).getAttribute("aria-invalid"),
    ).toBe("true");
    await checkPage(page);
    await shoot(page, "profile");

    // The header's links: Security, and the API viewer.
    await page.getByRole("navigation").getByRole("link", { name: "Security" }).click();
    await page.waitForURL(`${server.url}/settings/security`);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  test("an expired password must be changed first, then the page asked for opens", async () => {
    const user = await server.userWithPassword();
    await server.request("PUT", `/api/v1/users/${user.id}`, { body: { password_expired: true } });
    const { context, page, problems } = await openBrowser();
    await page.goto(`${server.url}/settings/profile`);
    await signIn(page, user.username, user.password);
    await page.waitForURL(/\/settings\/password\?next=%2Fsettings%2Fprofile$/);
    expect(await page.locator("h1").innerText()).toBe("Choose a new password");
    await checkPage(page);
    await shoot(page, "new-password");
    // Nothing else opens until it is changed.
    await page.goto(`${server.url}/settings/security`);
    await page.waitForURL(/\/settings\/password/);

    // The password was given a moment ago, to sign in: it is not asked for again.
    expect(await page.getByLabel("Current password").count()).toBe(0);
    await page.getByLabel("New password", { exact: true }).fill("a brand new phrase");
    await page.getByLabel("Repeat the new password").fill("a brand new phrase");
    await page.getByRole("button", { name: "Save and continue" }).click();
    await page.waitForURL(`${server.url}/settings/security`);
    const me = await server.request("GET", `/api/v1/users/${user.id}`);
    expect(me.body.password_expired).toBeUndefined();
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  test("the API viewer: a browser without a session signs in first, then Try it out works on the session alone", async () => {
    const user = await server.userWithPassword();
    const { context, page, problems } = await openBrowser();
    await page.goto(`${server.url}/api/`);
    await page.waitForURL(`${server.url}/sign-in?next=%2Fapi%2F`);
    await signIn(page, user.username, user.password);
    await page.waitForURL(`${server.url}/api/`);
    await page.locator(".opblock").first().waitFor();

    const operation = page.locator("#operations-User-user-me");
    await operation.locator(".opblock-summary").click();
    await operation.getByRole("button", { name: "Try it out" }).click();
    const [call] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${server.url}/api/v1/user`),
      operation.getByRole("button", { name: "Execute" }).click(),
    ]);
    expect(call.status()).toBe(200);
    expect(((await call.json()) as { username: string }).username).toBe(user.username);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shoot(page, "viewer", false);

    // Its bar leads to the user's pages, and out.
    await page.getByRole("link", { name: "Security" }).click();
    await page.waitForURL(`${server.url}/settings/security`);
    await page.getByRole("link", { name: "API" }).click();
    await page.waitForURL(`${server.url}/api/`);
    await page.getByRole("link", { name: "Sign out" }).click();
    await page.waitForURL(`${server.url}/sign-out`);
    await checkPage(page);
    await page.locator("main").getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${server.url}/sign-in`);
    await page.goto(`${server.url}/settings/profile`);
    await page.waitForURL(`${server.url}/sign-in?next=%2Fsettings%2Fprofile`);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});

// A hosted instance's page in a real browser (headless Chromium). On the in-memory driver: its
// owner reaches it from the team's page, takes a snapshot, sets a variable and watches a new log
// line appear; a viewer sees no button; another team's member gets the 404 page; without script an
// owner imports a snapshot from a file and deletes the instance. With a real Node-RED: the editor
// opened from the page names the instance in its header, links back to the page, and shows who is
// signed in. With UPDATE_SCREENSHOTS=1, the screenshot "instance" goes to docs/screenshots/.
/// <reference lib="dom" />
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import {
  browserMissing,
  checkPage,
  closeServerAndBrowser,
  openBrowser,
  openBrowserWithoutScript,
  screenshot,
  serverAndBrowser,
  signInOnPage,
} from "../support/browser";
import type { TestServer } from "../support/harness";

type Person = { id: string; username: string; password: string };

async function signIn(page: Page, server: TestServer, user: Person) {
  await page.goto(`${server.url}/sign-in`);
  await signInOnPage(page, user.username, user.password);
  await page.waitForURL(`${server.url}/teams`);
}

/** A team of `owner`'s with an application and an instance, once it runs: their ids. */
async function teamWithInstance(server: TestServer, owner: Person, timeout = 10_000) {
  const sid = await server.signIn(owner.username, owner.password);
  const team = await server.asSession(sid, "POST", "/api/v1/teams", {
    body: { name: "Operations" },
  });
  const teamId = team.body.id as string;
  const application = await server.asSession(sid, "POST", "/api/v1/applications", {
    body: { name: "Line 1", teamId },
  });
  const name = `line-${Math.random().toString(36).slice(2, 8)}`;
  const instance = await server.asSession(sid, "POST", "/api/v1/projects", {
    body: { name, applicationId: application.body.id },
  });
  const instanceId = instance.body.id as string;
  await vi.waitFor(
    async () => {
      const status = await server.request("GET", `/api/v1/projects/${instanceId}/status`);
      expect(status.body.meta.state).toBe("running");
    },
    { timeout, interval: 200 },
  );
  return { teamId, instanceId, name, path: `/teams/${teamId}/instances/${instanceId}` };
}

describe.skipIf(browserMissing)("an instance's page in Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let people: Record<"owner" | "viewer" | "outsider", Person>;
  let instance: Awaited<ReturnType<typeof teamWithInstance>>;

  beforeAll(async () => {
    ({ server, browser } = await serverAndBrowser("in-memory"));
    people = {
      owner: await server.userWithPassword({ name: "Grace Hopper" }),
      viewer: await server.userWithPassword({ name: "A viewer" }),
      outsider: await server.userWithPassword({ name: "An outsider" }),
    };
    instance = await teamWithInstance(server, people.owner);
    await addMember(server.db, {
      teamId: instance.teamId,
      userId: people.viewer.id,
      role: Role.viewer,
    });
  });
  afterAll(() => closeServerAndBrowser(server, browser));

  test("an owner reaches it from the team's page, takes a snapshot, sets a variable, and follows the log", async () => {
    const { context, page, problems } = await openBrowser(browser);
    await signIn(page, server, people.owner);
    await page.getByRole("link", { name: "Operations" }).click();
    await page.getByRole("link", { name: instance.name, exact: true }).click();
    await page.waitForURL(`${server.url}${instance.path}`);
    expect(await page.locator(".facts .state").innerText()).toBe("Running");
    expect(await page.getByRole("link", { name: /Open editor/ }).count()).toBe(1);

    // With no snapshot yet, the form to take one is open.
    await page.getByLabel("Snapshot name").fill("Before the change");
    await page.getByRole("button", { name: "Take snapshot" }).click();
    await page.waitForURL(/done=snapshot$/);
    expect(await page.getByRole("status").innerText()).toContain("The snapshot is taken.");
    expect(await page.locator(".snapshots").innerText()).toContain("Before the change");

    await page.getByText("Add a variable").click();
    await page.getByLabel("Variable name").fill("LINE_SPEED");
    await page.getByLabel("Value", { exact: true }).fill("42");
    await page.getByRole("button", { name: "Add variable" }).click();
    await page.waitForURL(/done=env-added$/);
    expect(await page.getByLabel("Value of LINE_SPEED").inputValue()).toBe("42");

    // A new line in the log (the driver logs each state) appears without reloading.
    const lines = page.locator("ol.log li");
    const before = await lines.count();
    const restarted = await server.request(
      "POST",
      `/api/v1/projects/${instance.instanceId}/actions/restart`,
    );
    expect(restarted.status).toBe(200);
    await expect.poll(() => lines.count(), { timeout: 10_000 }).toBeGreaterThan(before);
    expect(await lines.last().innerText()).toContain("now running");

    await checkPage(page);
    await screenshot(page, "instance");
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  test("a viewer sees the instance and no button or form", async () => {
    const { context, page, problems } = await openBrowser(browser);
    await signIn(page, server, people.viewer);
    await page.goto(`${server.url}${instance.path}`);
    expect(await page.locator(".facts .state").innerText()).toBe("Running");
    expect(await page.locator("main button").count()).toBe(0);
    expect(await page.locator("main form").count()).toBe(0);
    expect(await page.locator("ol.log li").count()).toBeGreaterThan(0);
    await checkPage(page);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  test("another team's member gets the 404 page", async () => {
    const { context, page, problems } = await openBrowser(browser);
    await signIn(page, server, people.outsider);
    const response = await page.goto(`${server.url}${instance.path}`);
    expect(response?.status()).toBe(404);
    const text = await page.locator("main").innerText();
    expect(text).not.toContain(instance.name);
    expect(text).not.toContain("Operations");
    await checkPage(page);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  test("without script an owner imports a snapshot from a file, and deletes the instance after being asked", async () => {
    const sid = await server.signIn(people.owner.username, people.owner.password);
    const snapshot = await server.asSession(
      sid,
      "POST",
      `/api/v1/projects/${instance.instanceId}/snapshots`,
      { body: { name: "To export" } },
    );
    const before = await server.asSession(
      sid,
      "GET",
      `/api/v1/projects/${instance.instanceId}/snapshots`,
    );
    const exported = await server.asSession(
      sid,
      "POST",
      `/api/v1/projects/${instance.instanceId}/snapshots/${snapshot.body.id}/export`,
      { body: { credentialSecret: "a long enough secret" } },
    );
    expect(exported.status, exported.text).toBe(200);

    const context = await openBrowserWithoutScript(browser, {
      viewport: { width: 1000, height: 800 },
    });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await signIn(page, server, people.owner);
    await page.goto(`${server.url}${instance.path}`);
    await page.getByText("Import a snapshot").click();
    await page.getByLabel("Export file").setInputFiles({
      name: "export.json",
      mimeType: "application/json",
      buffer: Buffer.from(exported.text),
    });
    await page.getByLabel("The export’s secret").fill("a long enough secret");
    await page.getByRole("button", { name: "Import snapshot" }).click();
    await page.waitForURL(/done=imported$/);
    expect(await page.locator(".snapshots li").count()).toBe(before.body.count + 1);
    await checkPage(page);

    await page.getByRole("button", { name: "Delete instance" }).click();
    await page.waitForURL(`${server.url}${instance.path}/delete`);
    expect(await page.locator("main").innerText()).toContain(instance.name);
    await checkPage(page);
    await page.getByRole("button", { name: "Delete instance" }).click();
    await page.waitForURL(`${server.url}/teams/${instance.teamId}?done=deleted`);
    expect(await page.getByRole("status").innerText()).toContain("The instance is deleted.");
    await context.close();
  }, 60_000);
});

describe.skipIf(browserMissing)("an instance's editor, with a real Node-RED", () => {
  let server: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    ({ server, browser } = await serverAndBrowser(true));
  });
  afterAll(() => closeServerAndBrowser(server, browser));

  test("the editor opened from the page names the instance, links back to it and shows who is signed in", async () => {
    const owner = await server.userWithPassword({ name: "Grace Hopper" });
    const instance = await teamWithInstance(server, owner, 60_000);
    const { context, page, problems } = await openBrowser(browser);
    await signIn(page, server, owner);
    await page.goto(`${server.url}${instance.path}`);
    await page.getByRole("link", { name: /Open editor/ }).click();
    await page.locator("#red-ui-header-button-deploy").waitFor({ timeout: 30_000 });

    const logo = page.locator(".red-ui-header-logo a");
    expect(await logo.getAttribute("href")).toBe(`${server.url}${instance.path}`);
    expect(await logo.innerText()).toContain(`Flowplane · ${instance.name}`);
    await page.locator("#red-ui-header-button-user").click();
    expect(await page.locator("#usermenu-item-username").innerText()).toContain(owner.username);

    await logo.click();
    await page.waitForURL(`${server.url}${instance.path}`);
    expect(await page.locator("h2#instance-name").innerText()).toContain(instance.name);
    expect(problems).toEqual([]);
    await context.close();
  }, 180_000);
});

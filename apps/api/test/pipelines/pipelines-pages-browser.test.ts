// The device group and pipeline pages in a real browser (headless Chromium): an owner reads the
// team's groups and a group's page, the team's pipelines, and deploys a pipeline's stage from its
// page — the page follows the deploy (pipeline.js) and shows that it succeeded; without script the
// page's Refresh link shows the same. A viewer is told their role does not show groups and reads
// the pipelines without a form; another team's member gets the 404 page. Every page is checked
// (labels, one heading, 375 px, axe). Instances run on the in-memory driver, so a deploy is quick.
import { Role } from "@flowplane/contract";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  browserMissing,
  checkPage,
  launchBrowser,
  openBrowser,
  openBrowserWithoutScript,
  screenshot,
  signInOnPage,
} from "../support/browser";
import { freePort, startServer, type TestServer } from "../support/harness";
import { asPerson, type SignedInPerson, signedInPerson } from "../support/signed-in";

type Person = SignedInPerson;

describe.skipIf(browserMissing)("device group and pipeline pages in Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let owner: Person, viewer: Person, outsider: Person;
  let teamId: string;
  let groupPath: string;
  let pipelinePath: string;

  const person = (teams: { id: string; role: number }[] = []) => signedInPerson(server, teams);
  const api = async (who: Person, method: string, path: string, body?: unknown) => {
    const reply = await asPerson(server, who, method, path, body);
    expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300);
    return reply.body;
  };

  beforeAll(async () => {
    const port = await freePort();
    server = await startServer({
      port,
      baseUrl: `http://127.0.0.1:${port}`,
      instances: "in-memory",
      rateLimits: { signInAddress: { max: 1000, windowMs: 30_000 } },
    });
    browser = await launchBrowser();
    owner = await person();
    teamId = (await api(owner, "POST", "/api/v1/teams", { name: "Assembly" })).id;
    viewer = await person([{ id: teamId, role: Role.viewer }]);
    outsider = await person();
    await api(outsider, "POST", "/api/v1/teams", { name: "Elsewhere" });
    const applicationId = (
      await api(owner, "POST", "/api/v1/applications", { name: "Line 1", teamId })
    ).id;
    const instance = await api(owner, "POST", "/api/v1/projects", {
      name: "asm-dev",
      applicationId,
    });
    const snapshot = await api(owner, "POST", `/api/v1/projects/${instance.id}/snapshots`, {
      name: "first release",
    });
    const group = await api(owner, "POST", `/api/v1/applications/${applicationId}/device-groups`, {
      name: "Presses",
      description: "The hall's presses",
    });
    const groupApi = `/api/v1/applications/${applicationId}/device-groups/${group.id}`;
    const devices = [];
    for (const name of ["press-1", "press-2", "press-3"]) {
      devices.push(
        (
          await api(owner, "POST", "/api/v1/devices", {
            name,
            team: teamId,
            application: applicationId,
          })
        ).id,
      );
    }
    await api(owner, "PATCH", groupApi, { add: devices.slice(0, 2) });
    await api(owner, "PUT", groupApi, { targetSnapshotId: snapshot.id });
    await api(owner, "PUT", `${groupApi}/settings`, { env: [{ name: "LINE", value: "1" }] });
    groupPath = `/teams/${teamId}/device-groups/${group.id}`;
    const pipeline = await api(owner, "POST", "/api/v1/pipelines", {
      applicationId,
      name: "Release",
    });
    const dev = await api(owner, "POST", `/api/v1/pipelines/${pipeline.id}/stages`, {
      name: "dev",
      instanceId: instance.id,
    });
    await api(owner, "POST", `/api/v1/pipelines/${pipeline.id}/stages`, {
      name: "presses",
      source: dev.id,
      deviceGroupId: group.id,
    });
    pipelinePath = `/teams/${teamId}/pipelines/${pipeline.id}`;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function signedIn(page: Page, who: Person, path: string) {
    await page.goto(server.url + path);
    await signInOnPage(page, who.username, who.password);
    await page.waitForURL(server.url + path);
  }

  test("an owner reads the groups and a group, and deploys a stage whose outcome the page shows", async () => {
    const { context, page, problems } = await openBrowser(browser);
    await signedIn(page, owner, `/teams/${teamId}/device-groups`);
    const main = page.locator("main");
    expect(await main.innerText()).toMatch(/Presses[\s\S]*Line 1\s+2\s+first release/);
    await checkPage(page);
    await screenshot(page, "device-groups");

    await page.getByRole("link", { name: "Presses (Line 1)" }).click();
    await page.waitForURL(server.url + groupPath);
    expect(await main.innerText()).toContain("Every member runs first release");
    await page.getByText("Add devices").click();
    await page.getByLabel("press-3").check();
    await page.getByRole("button", { name: "Add to group" }).click();
    await page.waitForURL(`${server.url}${groupPath}?done=added`);
    expect(await main.innerText()).toContain("The devices are in the group.");
    await checkPage(page);
    await screenshot(page, "device-group");

    await page.goto(`${server.url}/teams/${teamId}/pipelines`);
    expect(await main.innerText()).toMatch(/Release[\s\S]*· Line 1/);
    await checkPage(page);
    await screenshot(page, "pipelines");

    await page.getByRole("link", { name: "Release (Line 1)" }).click();
    await page.waitForURL(server.url + pipelinePath);
    await page.getByRole("button", { name: "Deploy to presses" }).click();
    await page.waitForURL(new RegExp(`${pipelinePath}\\?operation=\\w+`));
    const outcome = page.locator(".deploy-outcome");
    await expect.poll(() => outcome.innerText(), { timeout: 90_000 }).toContain("Succeeded");
    expect(await outcome.innerText()).toContain("is deployed to presses");
    await checkPage(page);
    await screenshot(page, "pipeline");
    expect(problems).toEqual([]);
    await context.close();
  });

  test("without script, the deploy's page shows its outcome on Refresh", async () => {
    const context = await openBrowserWithoutScript(browser);
    const page = await context.newPage();
    await signedIn(page, owner, pipelinePath);
    await page.getByRole("button", { name: "Deploy to presses" }).click();
    await page.waitForURL(new RegExp(`${pipelinePath}\\?operation=\\w+`));
    const outcome = page.locator(".deploy-outcome");
    // As a person without script waits: Refresh until the outcome shows (bounded generously: on a
    // loaded machine the deploy outlived 100 refreshes).
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline && !(await outcome.innerText()).includes("Succeeded")) {
      await page.waitForTimeout(200);
      await page.getByRole("link", { name: "Refresh" }).click();
      await page.waitForLoadState();
    }
    expect(await outcome.innerText()).toContain("Succeeded");
    await checkPage(page);
    await context.close();
  }, 240_000);

  test("a viewer reads the pipelines but not the groups; another team's member gets 404", async () => {
    const { context, page, problems } = await openBrowser(browser);
    await signedIn(page, viewer, `/teams/${teamId}/device-groups`);
    const main = page.locator("main");
    expect(await main.innerText()).toContain("does not show its device groups");
    await checkPage(page);
    const refused = await page.goto(server.url + groupPath);
    expect(refused?.status()).toBe(403);
    await checkPage(page);
    await page.goto(server.url + pipelinePath);
    expect(await main.innerText()).toContain("presses");
    expect(await page.getByRole("button", { name: "Deploy to presses" }).count()).toBe(0);
    await checkPage(page);
    expect(problems).toEqual([]);
    await context.close();

    const other = await openBrowser(browser);
    await other.page.goto(server.url + groupPath);
    await signInOnPage(other.page, outsider.username, outsider.password);
    await other.page.waitForURL(server.url + groupPath);
    const group = await other.page.goto(server.url + groupPath);
    expect(group?.status()).toBe(404);
    await checkPage(other.page);
    const pipeline = await other.page.goto(server.url + pipelinePath);
    expect(pipeline?.status()).toBe(404);
    await checkPage(other.page);
    await other.context.close();
  });
});

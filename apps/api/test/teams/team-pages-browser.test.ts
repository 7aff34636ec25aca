// The pages of teams, applications and instances in a real browser (headless Chromium), reached
// from the page a person lands on after signing in. A team owner creates a team, an application
// and an instance (a real Node-RED), opens its editor (signed in through the platform), and stops
// and starts it there; a viewer and a member see it and cannot act; another team's member sees nothing; and
// everything works with script turned off. With UPDATE_SCREENSHOTS=1, screenshots go to
// docs/screenshots/ (the README shows them).
// The browser's globals, for the code page.evaluate runs in the page.
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
import { type TestServer } from "../support/harness";

/** Signs in from the sign-in page, which lands on the Teams page. */
async function toTeams(
  page: Page,
  server: TestServer,
  user: { username: string; password: string },
) {
  await page.goto(`${server.url}/sign-in`);
  await signInOnPage(page, user.username, user.password);
  await page.waitForURL(`${server.url}/teams`);
}

/** The row of an instance on its team's page. */
const instanceRow = (page: Page, name: string) => page.getByRole("row", { name: new RegExp(name) });

describe.skipIf(browserMissing)("a team's pages in Chromium, with a real Node-RED", () => {
  let server: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    ({ server, browser } = await serverAndBrowser(true));
  });
  afterAll(() => closeServerAndBrowser(server, browser));

  test("an owner creates a team, an application and an instance, opens its editor, and stops and starts it", async () => {
    const owner = await server.userWithPassword({ name: "Grace Hopper" });
    const { context, page, problems } = await openBrowser(browser);
    await toTeams(page, server, owner);
    expect(await page.locator("main").innerText()).toContain("You are not a member of any team");

    await page.getByLabel("Team name").fill("Operations");
    await page.getByRole("button", { name: "Create team" }).click();
    await page.waitForURL(/\/teams\/\w+\?done=created$/);
    const teamUrl = page.url().replace(/\?.*$/, "");
    await page.getByLabel("Application name").fill("Line 1");
    await page.getByLabel("Description (optional)").fill("The packing line");
    await page.getByRole("button", { name: "Create application" }).click();
    await page.waitForURL(`${teamUrl}?done=application`);

    const name = `line-${Math.random().toString(36).slice(2, 8)}`;
    const application = page.getByRole("region", { name: "Line 1" });
    await application.getByLabel("Instance name").fill(name);
    await application.getByRole("button", { name: "Create instance" }).click();
    await page.waitForURL(`${teamUrl}?done=instance`);
    // The page's script shows the page again once Node-RED answers.
    const row = instanceRow(page, name);
    await row.locator(".state-running").waitFor({ timeout: 60_000 });
    await checkPage(page);
    await screenshot(page, "team");

    // The editor: the instance's own Node-RED on a host of its own, signed in to through the
    // platform's page (already signed in there: straight back), never with a password.
    const editorUrl = await row.getByRole("link", { name: /Open editor/ }).getAttribute("href");
    const instanceId = (
      await server.request("GET", `/api/v1/teams/${teamUrl.split("/").pop()}/applications`)
    ).body.applications[0].instances[0].id as string;
    expect(editorUrl).toBe(
      (await server.request("GET", `/api/v1/projects/${instanceId}`)).body.url as string,
    );
    expect(problems).toEqual([]);
    await row.getByRole("link", { name: /Open editor/ }).click();
    await page.locator("#red-ui-header-button-deploy").waitFor({ timeout: 30_000 });
    expect(page.url().startsWith(`${editorUrl}/`)).toBe(true);
    expect(await page.locator("#node-dialog-login-password").count()).toBe(0);

    // Back on the team's page: stop, then start again.
    await page.goto(teamUrl);
    await instanceRow(page, name)
      .getByRole("button", { name: `Stop ${name}` })
      .click();
    await page.waitForURL(`${teamUrl}?done=stopped`);
    expect(await page.getByRole("status").innerText()).toContain("The instance is stopped.");
    expect(await instanceRow(page, name).locator(".state").innerText()).toBe("Stopped");
    expect(
      await instanceRow(page, name)
        .getByRole("link", { name: /Open editor/ })
        .count(),
    ).toBe(0);
    expect(
      (await server.request("GET", `/api/v1/projects/${instanceId}/status`)).body.meta.state,
    ).toBe("stopped");

    await instanceRow(page, name)
      .getByRole("button", { name: `Start ${name}` })
      .click();
    await page.waitForURL(`${teamUrl}?done=started`);
    expect(await instanceRow(page, name).locator(".state").innerText()).toBe("Running");
    const editor = await fetch(editorUrl!);
    expect(editor.status).toBe(200);
    expect(problems).toEqual([]);
    await context.close();

    // A viewer opens the same editor from the console, signed in, and may only read: Node-RED
    // shows its deploy button locked, and the user menu names them.
    const viewer = await server.userWithPassword({ name: "Vera Viewer" });
    await addMember(server.db, {
      teamId: teamUrl.split("/").pop()!,
      userId: viewer.id,
      role: Role.viewer,
    });
    const asViewer = await openBrowser(browser);
    await toTeams(asViewer.page, server, viewer);
    await asViewer.page.goto(teamUrl);
    await instanceRow(asViewer.page, name)
      .getByRole("link", { name: /Open editor/ })
      .click();
    await asViewer.page
      .locator(".red-ui-deploy-button-group.readOnly")
      .waitFor({ timeout: 30_000 });
    expect(await asViewer.page.locator("#red-ui-header-button-deploy.disabled").count()).toBe(1);
    await asViewer.context.close();
  }, 240_000);
});

describe.skipIf(browserMissing)("a team's pages in Chromium, by role", () => {
  let server: TestServer;
  let browser: Browser;
  let teamId: string;
  let instanceName: string;
  type Person = { id: string; username: string; password: string };
  let people: Record<"owner" | "member" | "viewer" | "outsider", Person>;

  beforeAll(async () => {
    ({ server, browser } = await serverAndBrowser("in-memory"));
    people = {
      owner: await server.userWithPassword({ name: "Grace Hopper" }),
      member: await server.userWithPassword({ name: "A member" }),
      viewer: await server.userWithPassword({ name: "A viewer" }),
      outsider: await server.userWithPassword({ name: "An outsider" }),
    };
    const sid = await server.signIn(people.owner.username, people.owner.password);
    const team = await server.asSession(sid, "POST", "/api/v1/teams", {
      body: { name: "Operations" },
    });
    teamId = team.body.id;
    const application = await server.asSession(sid, "POST", "/api/v1/applications", {
      body: { name: "Line 1", description: "The packing line", teamId },
    });
    instanceName = `line-${Math.random().toString(36).slice(2, 8)}`;
    const instance = await server.asSession(sid, "POST", "/api/v1/projects", {
      body: { name: instanceName, applicationId: application.body.id },
    });
    // Creation starts it in the background; the in-memory driver is done at once.
    await vi.waitFor(async () => {
      const status = await server.request("GET", `/api/v1/projects/${instance.body.id}/status`);
      expect(status.body.meta.state).toBe("running");
    });
    await addMember(server.db, { teamId, userId: people.member.id, role: Role.member });
    await addMember(server.db, { teamId, userId: people.viewer.id, role: Role.viewer });
    // The outsider has a team of their own.
    const theirs = await server.signIn(people.outsider.username, people.outsider.password);
    await server.asSession(theirs, "POST", "/api/v1/teams", { body: { name: "Elsewhere" } });
  });
  afterAll(() => closeServerAndBrowser(server, browser));

  for (const role of ["viewer", "member"] as const) {
    test(`a ${role} sees the instance, its state and its editor, and no button to act`, async () => {
      const { context, page, problems } = await openBrowser(browser);
      await toTeams(page, server, people[role]);
      await page.getByRole("link", { name: "Operations" }).click();
      await page.waitForURL(`${server.url}/teams/${teamId}`);
      const row = instanceRow(page, instanceName);
      expect(await row.locator(".state").innerText()).toBe("Running");
      expect(await row.getByRole("link", { name: /Open editor/ }).count()).toBe(1);
      expect(await row.getByRole("button").count()).toBe(0);
      expect(await page.getByRole("button", { name: /Create/ }).count()).toBe(0);
      expect(await page.locator("main form").count()).toBe(0);
      await checkPage(page);
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);
  }

  test("another team's member sees nothing of it: not in their teams, 404 by its address", async () => {
    const { context, page, problems } = await openBrowser(browser);
    await toTeams(page, server, people.outsider);
    expect(await page.locator("main").innerText()).toContain("Elsewhere");
    expect(await page.locator("main").innerText()).not.toContain("Operations");
    for (const path of [`/teams/${teamId}`, `/teams/${teamId}/members`]) {
      const response = await page.goto(`${server.url}${path}`);
      expect(response?.status(), path).toBe(404);
      const text = await page.locator("main").innerText();
      expect(text).not.toContain("Operations");
      expect(text).not.toContain(instanceName);
    }
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  test("without script an owner stops and starts the instance, invites, and signs out", async () => {
    const context = await openBrowserWithoutScript(browser, {
      viewport: { width: 1000, height: 800 },
    });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await toTeams(page, server, people.owner);
    await page.getByRole("link", { name: "Operations" }).click();
    await page.waitForURL(`${server.url}/teams/${teamId}`);
    await instanceRow(page, instanceName)
      .getByRole("button", { name: `Stop ${instanceName}` })
      .click();
    await page.waitForURL(/done=stopped/);
    expect(await instanceRow(page, instanceName).locator(".state").innerText()).toBe("Stopped");
    await instanceRow(page, instanceName)
      .getByRole("button", { name: `Start ${instanceName}` })
      .click();
    await page.waitForURL(/done=started/);
    expect(await instanceRow(page, instanceName).locator(".state").innerText()).toBe("Running");

    await page
      .getByRole("navigation", { name: "Team" })
      .getByRole("link", { name: "Members" })
      .click();
    await page.waitForURL(`${server.url}/teams/${teamId}/members`);
    const invitee = await server.userWithPassword({ name: "Ada Lovelace" });
    await page.getByLabel("Usernames or emails").fill(invitee.username);
    await page.getByLabel("Role", { exact: true }).selectOption("10");
    await page.getByRole("button", { name: "Invite" }).click();
    await page.waitForURL(/done=invited/);
    expect(
      await page.getByRole("row", { name: new RegExp(invitee.username) }).innerText(),
    ).toContain("Viewer");
    await checkPage(page);
    await screenshot(page, "members");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${server.url}/sign-in`);
    await page.goto(`${server.url}/teams`);
    await page.waitForURL(`${server.url}/sign-in`);
    await context.close();
  }, 60_000);

  test("the Teams page: the person's teams, and the invitations they can accept", async () => {
    // Another team invites the viewer, who sees it beside their teams and joins.
    const research = await server.request("POST", "/api/v1/teams", {
      body: { name: "Research" },
    });
    await server.request("POST", `/api/v1/teams/${research.body.id}/invitations`, {
      body: { user: people.viewer.username, role: Role.member },
    });
    const { context, page, problems } = await openBrowser(browser);
    await toTeams(page, server, people.viewer);
    expect(await page.locator("main").innerText()).toContain("Research invites you as Member");
    await checkPage(page);
    await screenshot(page, "teams");
    await page.getByRole("button", { name: "Join Research" }).click();
    await page.waitForURL(`${server.url}/teams/${research.body.id}?done=joined`);
    expect(await page.getByRole("status").innerText()).toContain("You have joined the team.");
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});

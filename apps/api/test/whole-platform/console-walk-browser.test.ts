// The whole console, walked in Chromium as each kind of person uses it: from the Teams page, every
// link of this platform that a page shows is followed (one page of each shape: the second device
// page looks like the first), and every page reached must answer 200 and pass `checkPage` — a
// label on every field, one heading, no sideways scroll on a phone, and axe-core finding nothing
// serious or critical. The owner, a member, a viewer and an administrator each walk what their
// role shows them; another team's member then asks for every team page the owner reached and
// gets the 404 page with a way back. A page added tomorrow is walked the day it is linked.
// The browser's globals, for the code page.evaluate runs in the page.
/// <reference lib="dom" />
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { browserMissing, checkPage, launchBrowser, openBrowser } from "../support/browser";
import { freePort, startServer, type TestServer } from "../support/harness";

/** A page's address with its ids and query values blanked: pages of one shape are walked once. */
function shapeOf(url: URL): string {
  // An id: 8 or more characters with a digit or a capital (`device-groups` is not one).
  const path = url.pathname.replace(/\/(?=[^/]*[0-9A-Z])[A-Za-z0-9_-]{8,}(?=\/|$)/g, "/:id");
  const keys = [...url.searchParams.keys()].sort().join("&");
  return keys ? `${path}?${keys}` : path;
}

/** Links a walk never follows: leaving the console, or doing rather than showing. */
const NOT_WALKED = /^\/(api|account|trpc|assets|sign-out|sign-in)(\/|$)|\.csv$|\/editor(\/|$)/;

interface Walked {
  url: string;
  status: number;
}

let server: TestServer;
let browser: Browser;
let teamId: string;
const sids: Record<string, string> = {};

async function personWithSession(role?: number, admin = false) {
  const user = await server.userWithPassword();
  if (role !== undefined) await addMember(server.db, { teamId, userId: user.id, role });
  if (admin) {
    const made = await server.request("PUT", `/api/v1/users/${user.id}`, {
      token: server.adminToken,
      body: { admin: true },
    });
    expect(made.status, made.text).toBe(200);
  }
  return server.signIn(user.username, user.password);
}

/** Signs the browser in with a session made for it, without the sign-in page. */
async function openAs(sid: string) {
  const opened = await openBrowser(browser);
  await opened.context.addCookies([{ name: "sid", value: sid, url: server.url }]);
  return opened;
}

/** Every same-site link the page shows, as absolute URLs, without fragments. */
async function linksOf(page: Page): Promise<URL[]> {
  const hrefs = await page.$$eval("a[href]:not([download])", (anchors) =>
    anchors.map((anchor) => (anchor as HTMLAnchorElement).href),
  );
  const origin = new URL(server.url).origin;
  return hrefs
    .map((href) => new URL(href))
    .filter((url) => url.origin === origin && !NOT_WALKED.test(url.pathname))
    .map((url) => {
      url.hash = "";
      return url;
    });
}

/** A breadth-first walk from `start`: each shape of page once, every one checked. */
async function walk(sid: string, start = "/teams"): Promise<Walked[]> {
  const { context, page, problems } = await openAs(sid);
  const seen = new Set<string>();
  const queue = [new URL(start, server.url)];
  const walked: Walked[] = [];
  while (queue.length > 0) {
    const url = queue.shift()!;
    const shape = shapeOf(url);
    if (seen.has(shape)) continue;
    seen.add(shape);
    const response = await page.goto(url.href);
    const status = response?.status() ?? 0;
    walked.push({ url: url.pathname + url.search, status });
    expect(status, `${url.pathname}${url.search}`).toBe(200);
    await checkPage(page);
    queue.push(...(await linksOf(page)));
  }
  expect(problems).toEqual([]);
  await context.close();
  return walked;
}

describe.skipIf(browserMissing)("the console, walked by each role", () => {
  const walks: Record<string, Walked[]> = {};

  beforeAll(async () => {
    const port = await freePort();
    server = await startServer({
      port,
      baseUrl: `http://127.0.0.1:${port}`,
      instances: "in-memory",
      broker: "embedded",
    });
    browser = await launchBrowser();
    const team = await server.request("POST", "/api/v1/teams", {
      token: server.adminToken,
      body: { name: "Bottling Plant" },
    });
    teamId = team.body.id;
    // Something in every area, so that each page has rows to show.
    const application = await server.request("POST", "/api/v1/applications", {
      body: { name: "Line 1", teamId },
    });
    const applicationId = application.body.id as string;
    const instance = await server.request("POST", "/api/v1/projects", {
      body: { name: `walk-${Math.random().toString(36).slice(2, 8)}`, applicationId },
    });
    expect(instance.status, instance.text).toBe(200);
    await server.request("POST", `/api/v1/projects/${instance.body.id}/snapshots`, {
      body: { name: "First" },
    });
    const device = await server.request("POST", "/api/v1/devices", {
      body: { name: "press-7", team: teamId, application: applicationId },
    });
    expect(device.status, device.text).toBe(200);
    const group = await server.request(
      "POST",
      `/api/v1/applications/${applicationId}/device-groups`,
      { body: { name: "Presses" } },
    );
    expect(group.status, group.text).toBe(201);
    const pipeline = await server.request("POST", "/api/v1/pipelines", {
      body: { name: "To the line", applicationId },
    });
    expect(pipeline.status, pipeline.text).toBe(200);
    await server.request("POST", `/api/v1/pipelines/${pipeline.body.id}/stages`, {
      body: { name: "Development", instanceId: instance.body.id },
    });
    await server.request("POST", `/api/v1/teams/${teamId}/broker/client`, {
      body: {
        username: "sensor",
        password: "a long enough password",
        acls: [{ action: "both", pattern: "sensors/#" }],
      },
    });
    sids.owner = await personWithSession(Role.owner);
    sids.member = await personWithSession(Role.member);
    sids.viewer = await personWithSession(Role.viewer);
    sids.admin = await personWithSession(undefined, true);
    sids.outsider = await personWithSession();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  for (const role of ["owner", "member", "viewer"] as const) {
    test(`the ${role} walks every page their role shows`, async () => {
      walks[role] = await walk(sids[role]!);
      const team = walks[role].filter(({ url }) => url.startsWith(`/teams/${teamId}`));
      expect(team.length, JSON.stringify(walks[role])).toBeGreaterThan(1);
    }, 300_000);
  }

  test("the administrator walks the administrator's pages", async () => {
    walks.admin = await walk(sids.admin!, "/admin");
    expect(walks.admin.some(({ url }) => url.startsWith("/admin"))).toBe(true);
  }, 300_000);

  test("another team's member gets the 404 page for every team page the owner reached", async () => {
    const teamPages = (walks.owner ?? []).filter(({ url }) => url.startsWith(`/teams/${teamId}`));
    expect(teamPages.length).toBeGreaterThan(1);
    const { context, page } = await openAs(sids.outsider!);
    for (const { url } of teamPages) {
      const response = await page.goto(new URL(url, server.url).href);
      expect(response?.status(), url).toBe(404);
      expect(await page.locator("main a[href='/teams']").count(), url).toBe(1);
    }
    await checkPage(page);
    // And the administrator's pages are not theirs either.
    const adminPages = (walks.admin ?? []).filter(({ url }) => url.startsWith("/admin"));
    expect(adminPages.length).toBeGreaterThan(1);
    for (const { url } of adminPages) {
      const response = await page.goto(new URL(url, server.url).href);
      expect([403, 404], url).toContain(response?.status());
    }
    await context.close();
  }, 300_000);
});

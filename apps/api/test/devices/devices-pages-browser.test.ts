// The team's device pages in a real browser (headless Chromium): an owner registers a device and
// sees its one-time code once with a copy button, filters the list, moves and deletes devices in
// bulk, and creates a provisioning token; the list follows a change without a reload; a viewer
// sees no forms; another team's member gets the 404 page. Every page passes checkPage (labels, one
// heading, 375 px, axe), with no CSP violation.
/// <reference lib="dom" />
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import type { Browser } from "playwright-core";
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
import type { TestServer } from "../support/harness";

describe.skipIf(browserMissing)("the team's device pages in Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let teamId: string;
  let applicationId: string;
  let devicesUrl: string;
  const people: Record<string, { username: string; password: string }> = {};
  const ids: Record<string, string> = {};

  async function device(name: string, application?: string) {
    const reply = await server.request("POST", "/api/v1/devices", {
      body: { name, team: teamId, ...(application && { application }) },
    });
    return reply.body.id as string;
  }

  async function signedIn(who: string, url: string) {
    const opened = await openBrowser(browser);
    await opened.page.goto(url);
    await signInOnPage(opened.page, people[who]!.username, people[who]!.password);
    await opened.page.waitForURL(url);
    return opened;
  }

  beforeAll(async () => {
    ({ server, browser } = await serverAndBrowser("in-memory"));
    const team = await server.request("POST", "/api/v1/teams", { body: { name: "Plant" } });
    teamId = team.body.id;
    const other = await server.request("POST", "/api/v1/teams", { body: { name: "Elsewhere" } });
    for (const [who, role, team] of [
      ["owner", Role.owner, teamId],
      ["viewer", Role.viewer, teamId],
      ["outsider", Role.owner, other.body.id],
    ] as const) {
      const user = await server.userWithPassword({ name: who });
      await addMember(server.db, { teamId: team, userId: user.id, role });
      people[who] = user;
    }
    const application = await server.request("POST", "/api/v1/applications", {
      body: { name: "Line 1", teamId },
    });
    applicationId = application.body.id;
    ids.assigned = await device("press-assigned", applicationId);
    ids.loose = await device("press-loose");
    ids.doomed = await device("press-doomed");
    devicesUrl = `${server.url}/teams/${teamId}/devices`;
  });
  afterAll(() => closeServerAndBrowser(server, browser));

  test("an owner registers a device and sees its code once, with a copy button", async () => {
    const { context, page, problems } = await signedIn("owner", devicesUrl);
    await page.getByRole("link", { name: "Register a device" }).click();
    await page.waitForURL(`${devicesUrl}/new`);
    await checkPage(page);
    await page.getByLabel("Name", { exact: true }).fill("line-9");
    await page.getByLabel("Type (optional)").fill("Raspberry Pi 4");
    await page
      .getByLabel("Application or instance (optional)")
      .selectOption({ label: "Application Line 1" });
    await page.getByRole("button", { name: "Register the device" }).click();
    const command = page.getByLabel("The agent's command line");
    await command.waitFor();
    const value = await command.inputValue();
    expect(value).toMatch(
      /^flowfuse-device-agent --otc [a-z]+(-[a-z]+){3} --ff-url http:\/\/127\.0\.0\.1:\d+$/,
    );
    expect(await page.getByRole("button", { name: "Copy", exact: true }).isVisible()).toBe(true);
    await checkPage(page);
    await screenshot(page, "device-register");
    const code = value.split(" ")[2]!;
    await page.getByRole("link", { name: "Go to the device" }).click();
    await page.locator("h2#device-name").waitFor();
    expect(await page.content()).not.toContain(code);
    await page.goto(`${devicesUrl}/new`);
    expect(await page.content()).not.toContain(code);
    expect(problems).toEqual([]);
    await context.close();
  });

  test("an owner filters the list, moves and deletes in bulk; the list follows changes", async () => {
    const { context, page, problems } = await signedIn("owner", devicesUrl);
    const table = page.locator("table.devices");
    expect(await table.innerText()).toContain("press-loose");
    await checkPage(page);
    await screenshot(page, "devices");

    await page.getByLabel("Application", { exact: true }).selectOption({ label: "Line 1" });
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL((url) => url.searchParams.get("application") === applicationId);
    expect(await table.innerText()).toContain("press-assigned");
    expect(await table.innerText()).not.toContain("press-loose");
    await page.getByRole("link", { name: "Show all" }).click();
    await page.waitForURL(`${devicesUrl}`);

    // The list follows a change made elsewhere, without a reload.
    await server.request("PUT", `/api/v1/devices/${ids.loose}`, { body: { name: "press-free" } });
    await expect.poll(() => table.innerText(), { timeout: 12_000 }).toContain("press-free");

    await page.getByLabel(`Select press-free (${ids.loose})`).check();
    await page.getByLabel("Move to").selectOption({ label: "Application Line 1" });
    await page.getByRole("button", { name: "Move", exact: true }).click();
    await page.waitForURL(`${devicesUrl}?done=moved`);
    expect(await page.locator("main").innerText()).toContain("The devices are moved.");
    const moved = await server.request("GET", `/api/v1/devices/${ids.loose}`);
    expect(moved.body.application.id).toBe(applicationId);

    await page.getByLabel(`Select press-doomed (${ids.doomed})`).check();
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete the checked devices" }).click();
    await page.waitForURL(`${devicesUrl}?done=deleted`);
    expect((await server.request("GET", `/api/v1/devices/${ids.doomed}`)).status).toBe(404);
    expect(problems).toEqual([]);
    await context.close();
  });

  test("an owner creates a provisioning token and sees its device.yml once; the device page", async () => {
    const { context, page, problems } = await signedIn("owner", `${devicesUrl}/provisioning`);
    await page.getByLabel("Name", { exact: true }).fill("line rollout");
    await page.getByRole("button", { name: "Create the token" }).click();
    const yml = page.getByLabel("device.yml");
    await yml.waitFor();
    expect(await yml.inputValue()).toContain("provisioningToken: fpv_");
    await checkPage(page);
    await screenshot(page, "provisioning");

    await page.goto(`${devicesUrl}/${ids.assigned}`);
    await page.getByLabel("Name of variable 1", { exact: true }).fill("LINE");
    await page.getByLabel("Value of variable 1", { exact: true }).fill("one");
    await page.getByRole("button", { name: "Save the variables" }).click();
    await page.waitForURL(`${devicesUrl}/${ids.assigned}?done=env#device-env`);
    expect(await page.getByLabel("Value of variable 1", { exact: true }).inputValue()).toBe("one");
    await checkPage(page);
    await screenshot(page, "device");
    expect(problems).toEqual([]);
    await context.close();
  });

  test("a viewer sees no forms; another team's member gets the 404 page", async () => {
    const { context, page, problems } = await signedIn("viewer", devicesUrl);
    expect(await page.locator("main form").count()).toBe(1);
    expect(await page.locator("main input[type=checkbox]").count()).toBe(0);
    await checkPage(page);
    await page.goto(`${devicesUrl}/${ids.assigned}`);
    expect(await page.locator("main form").count()).toBe(0);
    await checkPage(page);
    await context.close();

    const stranger = await signedIn("outsider", `${server.url}/teams`);
    const reply = await stranger.page.goto(devicesUrl);
    expect(reply?.status()).toBe(404);
    await checkPage(stranger.page);
    expect([...problems, ...stranger.problems]).toEqual([]);
    await stranger.context.close();
  });
});

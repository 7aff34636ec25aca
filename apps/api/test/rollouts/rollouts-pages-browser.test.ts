// The rollout pages in a real browser (headless Chromium): an owner plans a rollout from the
// group's page, reads the plan, starts it and reads its page, then aborts it (the page's script
// asks first). The plan and the rollout pages are checked (labels, one heading, 375 px, axe).
import { Role } from "@flowplane/contract";
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
import { asPerson, type SignedInPerson, signedInPerson } from "../support/signed-in";
import { rolloutFixture, type RolloutFixture } from "./rollout-fleet";

describe.skipIf(browserMissing)("rollout pages in Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let owner: SignedInPerson;
  let teamId: string;
  let fleet: RolloutFixture;

  beforeAll(async () => {
    ({ server, browser } = await serverAndBrowser("in-memory"));
    owner = await signedInPerson(server);
    teamId = (await asPerson(server, owner, "POST", "/api/v1/teams", { name: "Hall" })).body.id;
    const tokenOwner = await server.user({ teams: [{ id: teamId, role: Role.owner }] });
    fleet = await rolloutFixture(server, tokenOwner, teamId, 2);
  });
  afterAll(() => closeServerAndBrowser(server, browser));

  test("an owner plans, starts and aborts a rollout from the group's page", async () => {
    const { context, page, problems } = await openBrowser(browser);
    const groupPath = `/teams/${teamId}/device-groups/${fleet.groupId}`;
    await page.goto(server.url + groupPath);
    await signInOnPage(page, owner.username, owner.password);
    await page.waitForURL(server.url + groupPath);
    const main = page.locator("main");

    await page.getByText("Roll out a snapshot").click();
    await page.getByLabel("Snapshot to roll out").selectOption(fleet.next);
    await page.getByLabel("Waves").fill("1,100%");
    await page.getByLabel("Soak (seconds)").fill("3600");
    await page.getByRole("button", { name: "Plan" }).click();
    await page.waitForURL(`${server.url}${groupPath}/rollouts`);
    expect(await main.innerText()).toMatch(/Wave 1: 1 device[\s\S]*Wave 2: 1 device/);
    await checkPage(page);
    await screenshot(page, "rollout-plan");

    await page.getByRole("button", { name: "Start" }).click();
    await page.waitForURL(/\/rollouts\/[^/]+\?done=started$/);
    expect(await main.innerText()).toContain("The rollout is started");
    await checkPage(page);
    await screenshot(page, "rollout");

    page.once("dialog", (dialog) => dialog.accept());
    await page.getByRole("button", { name: "Abort" }).click();
    await page.waitForURL(/\?done=aborted$/);
    expect(await main.innerText()).toContain("Aborted by an owner");
    await checkPage(page);
    expect(problems).toEqual([]);
    await context.close();
  });
});

// The notifications in a real browser (headless Chromium): the count in the bar leads to the
// notifications page, where a person marks one read and deletes another; the page is checked
// (labels, one heading, 375 px, axe) with and without unread ones.
import { Role } from "@flowplane/contract";
import { recordEvent } from "@flowplane/db";
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
import { waiter } from "../support/until";

describe.skipIf(browserMissing)("notifications in Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let person: SignedInPerson;

  beforeAll(async () => {
    ({ server, browser } = await serverAndBrowser());
    const owner = await signedInPerson(server);
    const teamId = (await asPerson(server, owner, "POST", "/api/v1/teams", { name: "Yard" })).body
      .id as string;
    person = await signedInPerson(server, [{ id: teamId, role: Role.member }]);
    for (const name of ["Crane", "Gate"]) {
      await recordEvent(server.db, {
        type: "device.offline",
        teamId,
        entity: { type: "device", id: `dev-${name}` },
        data: { device: { id: `dev-${name}`, name } },
      });
    }
    await waiter(10_000, 50)("two notifications", async () => {
      const body = (await asPerson(server, person, "GET", "/api/v1/user/notifications")).body;
      return body.count === 2 ? true : undefined;
    });
  });
  afterAll(() => closeServerAndBrowser(server, browser));

  test("the count leads to the page, where one is marked read and another deleted", async () => {
    const { context, page, problems } = await openBrowser(browser);
    await page.goto(`${server.url}/teams`);
    await signInOnPage(page, person.username, person.password);
    await page.waitForURL(`${server.url}/teams`);
    await page.getByRole("link", { name: /^Notifications\s*2\s*unread$/ }).click();
    await page.waitForURL(`${server.url}/notifications`);
    const main = page.locator("main");
    expect(await main.innerText()).toContain("2 unread of 2.");
    await checkPage(page);
    await screenshot(page, "notifications");

    await page.getByRole("button", { name: /^Mark read\s*: Device Gate is offline$/ }).click();
    await page.waitForURL(/\?done=read$/);
    expect(await main.innerText()).toContain("1 unread of 2.");
    await expect
      .poll(() => page.getByRole("link", { name: /^Notifications\s*1\s*unread$/ }).count())
      .toBe(1);

    await page.getByRole("button", { name: /^Delete\s*: Device Crane is offline$/ }).click();
    await page.waitForURL(/\?done=deleted$/);
    expect(await main.innerText()).toContain("0 unread of 1.");
    await checkPage(page);
    expect(problems).toEqual([]);
    await context.close();
  });
});

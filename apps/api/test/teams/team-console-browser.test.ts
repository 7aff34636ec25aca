// A team's library, broker, audit log and settings pages in headless Chromium: an owner uses each
// (saving and deleting a library entry, creating a broker client and changing its ACLs, filtering
// the audit log, renaming the team), a viewer reads them without forms (and is refused the audit
// log), another team's member gets the 404 page, and without script a deletion asks on a page.
// Every page passes checkPage (labels, one h1, 375 px, axe). With UPDATE_SCREENSHOTS=1, the
// screenshots library, broker, audit-log and team-settings go to docs/screenshots/.
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
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

type User = { id: string; username: string; password: string };

describe.skipIf(browserMissing)(
  "a team's library, broker, audit log and settings in Chromium",
  () => {
    let server: TestServer;
    let browser: Browser;
    let owner: User;
    let viewer: User;
    let outsider: User;
    let base: string;

    async function signedIn(page: Page, user: User) {
      await page.goto(`${server.url}/sign-in`);
      await signInOnPage(page, user.username, user.password);
      await page.waitForURL(`${server.url}/teams`);
    }

    beforeAll(async () => {
      ({ server, browser } = await serverAndBrowser("in-memory"));
      [owner, viewer, outsider] = await Promise.all([
        server.userWithPassword({ name: "Ada Owner" }),
        server.userWithPassword({ name: "Vic Viewer" }),
        server.userWithPassword({ name: "Otto Outsider" }),
      ]);
      const sid = await server.signIn(owner.username, owner.password);
      const team = await server.asSession(sid, "POST", "/api/v1/teams", {
        body: { name: "Packing" },
      });
      base = `${server.url}/teams/${team.body.id}`;
      await addMember(server.db, { teamId: team.body.id, userId: viewer.id, role: Role.viewer });
      const flow = JSON.stringify([{ id: "a1", type: "inject", name: "Every minute" }]);
      for (const path of ["lines/packing", "lines/labels", "alerts"]) {
        await server.asSession(sid, "PUT", `/api/v1/teams/${team.body.id}/library/entry`, {
          body: { type: "flows", path, body: flow },
        });
      }
      await server.asSession(sid, "POST", `/api/v1/teams/${team.body.id}/broker/client`, {
        body: {
          username: "scanner",
          password: "a long password",
          acls: [{ action: "publish", pattern: "packing/scans" }],
        },
      });
    });
    afterAll(() => closeServerAndBrowser(server, browser));

    test("an owner uses each page", async () => {
      const { context, page, problems } = await openBrowser(browser);
      await signedIn(page, owner);
      page.on("dialog", (dialog) => dialog.accept());

      // The library: its folders and entries, one entry's content, saving and deleting.
      await page.goto(`${base}/library`);
      await page.getByRole("link", { name: "lines/" }).waitFor();
      await page.getByLabel("Path").fill("lines/boxes");
      await page.getByLabel("Content").fill('[{"id":"b1","type":"debug"}]');
      await page.getByRole("button", { name: "Save", exact: true }).click();
      await page.waitForURL(/done=saved/);
      await page.getByRole("link", { name: "boxes" }).click();
      await page.waitForURL(/\/library\/entry\?/);
      expect(await page.locator("pre.content").innerText()).toContain('"type": "debug"');
      await checkPage(page);
      await page.goto(`${base}/library?path=lines`);
      await page.getByRole("button", { name: "Delete flows lines/labels" }).click();
      await page.waitForURL(/done=deleted/);
      expect(await page.locator("main").innerText()).not.toContain("labels");
      await checkPage(page);
      await page.goto(`${base}/library`);
      await screenshot(page, "library");

      // The broker: no broker on this platform; a client created, its ACLs changed.
      await page.goto(`${base}/broker`);
      expect(await page.locator("main").innerText()).toContain("This platform has no MQTT broker");
      await page.getByLabel("Username").fill("line-2");
      await page.getByLabel("Password").fill("another long one");
      await page.getByLabel("Rule 1 action").selectOption("both");
      await page.getByLabel("Rule 1 topic pattern").fill("line/2/#");
      await page.getByRole("button", { name: "Create the client" }).click();
      await page.waitForURL(/done=created/);
      await checkPage(page);
      await screenshot(page, "broker");
      await page.getByRole("link", { name: "Edit ACLs of line-2" }).click();
      await page.getByLabel("Rule 2 topic pattern").fill("alarms/+");
      await checkPage(page);
      await page.getByRole("button", { name: "Save the ACLs" }).click();
      await page.waitForURL(/done=acls/);
      expect(await page.locator("main").innerText()).toContain("alarms/+");

      // The audit log: what was just done, newest first, then filtered by event.
      await page.goto(`${base}/audit-log`);
      const firstEvent = page.locator("tbody th code").first();
      expect(await firstEvent.innerText()).toBe("team.broker.client.updated");
      await checkPage(page);
      await screenshot(page, "audit-log");
      await page.getByLabel("Event").fill("team.library.entry.deleted");
      await page.getByRole("button", { name: "Show" }).click();
      await page.waitForURL(/event=team\.library\.entry\.deleted/);
      expect(await page.locator("tbody tr").count()).toBe(1);

      // The settings: renamed.
      await page.goto(`${base}/settings`);
      await page.getByLabel("Name").fill("Packing and labels");
      await page.getByRole("button", { name: "Save" }).click();
      await page.waitForURL(/done=saved/);
      expect(await page.locator("h1").innerText()).toBe("Packing and labels");
      await checkPage(page);
      await screenshot(page, "team-settings");
      expect(problems).toEqual([]);
      await context.close();
    });

    test("a viewer reads the library, broker and settings without forms, and not the audit log", async () => {
      const { context, page, problems } = await openBrowser(browser);
      await signedIn(page, viewer);
      for (const path of ["library", "broker", "settings", "broker/clients/scanner"]) {
        await page.goto(`${base}/${path}`);
        expect(await page.locator("main form").count(), path).toBe(path === "library" ? 1 : 0);
        await checkPage(page);
      }
      expect(await page.getByRole("link", { name: "Audit log" }).count()).toBe(0);
      const refused = await page.goto(`${base}/audit-log`);
      expect(refused?.status()).toBe(403);
      await checkPage(page);
      expect(problems).toEqual([]);
      await context.close();
    });

    test("another team's member gets the 404 page on each", async () => {
      const { context, page } = await openBrowser(browser);
      await signedIn(page, outsider);
      for (const path of ["library", "broker", "audit-log", "settings"]) {
        const reply = await page.goto(`${base}/${path}`);
        expect(reply?.status(), path).toBe(404);
      }
      await checkPage(page);
      await context.close();
    });

    test("without script, deleting a broker client asks on a page", async () => {
      const context = await openBrowserWithoutScript(browser);
      const page = await context.newPage();
      await signedIn(page, owner);
      await page.goto(`${base}/broker`);
      await page.getByRole("button", { name: "Delete scanner" }).click();
      await page.getByRole("heading", { name: "Delete a broker client" }).waitFor();
      await checkPage(page);
      await page.getByRole("button", { name: "Delete", exact: true }).click();
      await page.waitForURL(/done=deleted/);
      expect(await page.locator("main").innerText()).not.toContain("scanner");
      await context.close();
    });
  },
);

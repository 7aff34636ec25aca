// A device's page in a real browser (headless Chromium): its state, the snapshot it runs, the
// actions its owner may ask its agent for, and its Node-RED log — the kept lines in the page, then
// a line the device's agent (support/simulated-agent.ts) publishes appears while the page is open,
// followed over the log's Server-Sent Events. Without script, the page shows the kept lines.
// The browser's globals, for the code page.evaluate runs in the page.
/// <reference lib="dom" />
import { Role } from "@flowplane/contract";
import { addMember } from "@flowplane/db";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  browserMissing,
  checkPage,
  launchBrowser,
  openBrowser,
  openBrowserWithoutScript,
  signInOnPage,
} from "../support/browser";
import { freePort, startServer, type TestServer } from "../support/harness";
import { SimulatedAgent } from "../support/simulated-agent";

describe.skipIf(browserMissing)("a device's page in Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let agent: SimulatedAgent;
  let pageUrl: string;
  let owner: { id: string; username: string; password: string };

  beforeAll(async () => {
    const port = await freePort();
    server = await startServer({
      port,
      baseUrl: `http://127.0.0.1:${port}`,
      broker: "embedded",
    });
    browser = await launchBrowser();
    const team = await server.request("POST", "/api/v1/teams", {
      token: server.adminToken,
      body: { name: "Plant" },
    });
    owner = await server.userWithPassword({ name: "Ada" });
    await addMember(server.db, { teamId: team.body.id, userId: owner.id, role: Role.owner });
    const device = await server.request("POST", "/api/v1/devices", {
      token: server.adminToken,
      body: { name: "press-7", team: team.body.id },
    });
    agent = await SimulatedAgent.connect(device.body.credentials.broker);
    await agent.publishStatus({ state: "running" });
    pageUrl = `${server.url}/teams/${team.body.id}/devices/${device.body.id}`;
  });
  afterAll(async () => {
    await agent?.end();
    await browser?.close();
    await server?.close();
  });

  test("the page follows the log: a line the device publishes appears", async () => {
    const { context, page, problems } = await openBrowser(browser);
    await page.goto(pageUrl);
    await signInOnPage(page, owner.username, owner.password);
    await page.waitForURL(pageUrl);
    const main = page.locator("main");
    await expect.poll(() => main.innerText()).toContain("Device press-7");
    expect(await main.innerText()).toMatch(/State\s+running/);
    for (const action of ["Restart", "Suspend", "Start"]) {
      expect(await page.getByRole("button", { name: action, exact: true }).count()).toBe(1);
    }
    await agent.nextCommand((command) => command.command === "startLog");
    await agent.log({ level: "warn", msg: "hydraulic pressure high" });
    const log = page.locator("ol.log");
    await log.getByText("hydraulic pressure high").waitFor();
    expect(await log.locator("li").last().innerText()).toContain("[warn] hydraulic pressure high");

    await page.getByRole("button", { name: "Restart", exact: true }).click();
    await page.waitForURL(`${pageUrl}?done=restarted`);
    expect(await main.innerText()).toContain("The device restarted its Node-RED.");
    await checkPage(page);
    expect(problems).toEqual([]);
    await context.close();
  });

  test("without script, the page shows the lines kept", async () => {
    const context = await openBrowserWithoutScript(browser);
    const page = await context.newPage();
    await page.goto(pageUrl);
    await signInOnPage(page, owner.username, owner.password);
    await page.waitForURL(pageUrl);
    expect(await page.locator("ol.log").innerText()).toContain("[warn] hydraulic pressure high");
    await context.close();
  });
});

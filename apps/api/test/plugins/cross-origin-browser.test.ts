// Signing in wherever the browser opened the platform, and forms from other sites refused, in
// Chromium: the browser's own Sec-Fetch-Site and Origin, not a test's guess of them.
// The browser's globals, for the code page.evaluate runs in the page.
/// <reference lib="dom" />
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { browserMissing, launchBrowser, openBrowser, signInOnPage } from "../support/browser";
import { startServer, type TestServer } from "../support/harness";

describe.skipIf(browserMissing)("cross-site requests in Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let port: number;
  /** A page of another origin (another port of this machine), serving whatever a test gives it. */
  let elsewhere: Server;
  let elsewherePort: number;
  let elsewherePage = "";

  beforeAll(async () => {
    // BASE_URL as configured (http://127.0.0.1:3000) is neither address the browser uses.
    server = await startServer();
    port = Number(new URL(server.url).port);
    elsewhere = createServer((_request, reply) => {
      reply.writeHead(200, { "content-type": "text/html" }).end(elsewherePage);
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    elsewherePort = (elsewhere.address() as AddressInfo).port;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => elsewhere?.close(resolve));
    await server?.close();
  });

  for (const host of ["localhost", "127.0.0.1"]) {
    test(`signing in works with the platform opened at http://${host}:<port>`, async () => {
      const user = await server.userWithPassword();
      const { context, page, problems } = await openBrowser(browser);
      const origin = `http://${host}:${port}`;
      await page.goto(`${origin}/sign-in`);
      await signInOnPage(page, user.username, user.password);
      await page.waitForURL((url) => url.origin === origin && url.pathname !== "/sign-in");
      expect(await page.locator("h1").innerText()).not.toBe("Request refused");
      // The session's writes work from the page too (the API's cookie writes, same rule).
      const status = await page.evaluate(async () => {
        const reply = await fetch("/api/v1/teams", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "Opened here" }),
        });
        return reply.status;
      });
      expect(status).toBe(200);
      expect(problems).toEqual([]);
      await context.close();
    }, 60_000);
  }

  test("a form posted from a page of another origin is refused, and changes nothing", async () => {
    const user = await server.userWithPassword();
    const { context, page } = await openBrowser(browser);
    await page.goto(`${server.url}/sign-in`);
    await signInOnPage(page, user.username, user.password);
    await page.waitForURL((url) => url.pathname !== "/sign-in");

    // Another port of the same host is the same site: the browser sends the session's cookie with
    // the form, so only the cross-site rule stands between it and a new team.
    elsewherePage = `<!doctype html><form method="post" action="${server.url}/teams">
      <input name="name" value="Forged"></form><script>document.forms[0].submit()</script>`;
    await page.goto(`http://127.0.0.1:${elsewherePort}/`);
    await page.waitForURL(`${server.url}/teams`);
    expect(await page.locator("h1").innerText()).toBe("Request refused");
    expect(await page.locator("main").innerText()).toContain("sent from another site");
    const mine = await page.evaluate(async () => {
      const reply = await fetch("/api/v1/user/teams");
      return ((await reply.json()) as { teams: { name: string }[] }).teams.map((t) => t.name);
    });
    expect(mine).not.toContain("Forged");
    await context.close();
  }, 60_000);

  test("signing in from a page of another site is refused: no session is started", async () => {
    const user = await server.userWithPassword();
    const { context, page } = await openBrowser(browser);
    elsewherePage = `<!doctype html><form method="post" action="${server.url}/sign-in">
      <input name="username" value="${user.username}"><input name="password" value="${user.password}">
      </form><script>document.forms[0].submit()</script>`;
    await page.goto(`http://localhost:${elsewherePort}/`);
    await page.waitForURL(`${server.url}/sign-in`);
    expect(await page.locator("h1").innerText()).toBe("Request refused");
    await page.getByRole("link", { name: "Go to the sign-in page" }).click();
    await page.waitForURL(`${server.url}/sign-in`);
    expect(await page.locator("h1").innerText()).toBe("Sign in to Flowplane");
    expect((await context.cookies()).map((c) => c.name)).not.toContain("sid");
    await context.close();
  }, 60_000);
});

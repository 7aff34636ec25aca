// The API viewer at /api/ in a real browser: it renders under its strict Content-Security-Policy,
// lists every tag of the served document with all its operations (full paths), deep links open
// their operation, and "Try it out" calls the server named in the document with the token given
// under "Authorize".
// The browser's globals, for the code page.evaluate runs in the page.
/// <reference lib="dom" />
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { browserMissing, closeServerAndBrowser, serverAndBrowser } from "../support/browser";
import { type TestServer } from "../support/harness";
import { createTeam, makeUser } from "../support/team-fixtures";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** The document's operations by tag, in its order of first use, as "GET /api/v1/...". */
function documentedOperations(document: TestServer["document"]): Record<string, string[]> {
  const byTag: Record<string, string[]> = {};
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const tags = (operation as { tags?: string[] }).tags ?? [];
      for (const tag of tags.length > 0 ? tags : ["default"]) {
        (byTag[tag] ??= []).push(`${method.toUpperCase()} ${path}`);
      }
    }
  }
  return byTag;
}

describe.skipIf(browserMissing)("the API viewer in Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    ({ server, browser } = await serverAndBrowser());
  });
  afterAll(() => closeServerAndBrowser(server, browser));

  test("renders every tag with all its operations, with no CSP violation, and Try it out works with a token", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const violations: string[] = [];
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
    });
    page.on("pageerror", (error) => violations.push(`script error: ${error.message}`));
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (event) =>
        console.error(`Content-Security-Policy violation: ${event.violatedDirective}`),
      );
    });
    // Only the page itself gets the token this way; the page's own calls must use "Authorize".
    await context.route(`${server.url}/api/`, (route) =>
      route.continue({
        headers: { ...route.request().headers(), authorization: `Bearer ${server.adminToken}` },
      }),
    );
    // Waits for the reply only: what the test needs of the page it waits for below.
    const response = await page.goto(`${server.url}/api/`, { waitUntil: "commit" });
    expect(response?.status()).toBe(200);

    // Every tag of the served document, each with exactly its operations ("GET /path"), rendered
    // in the page at once: the list is past the size at which Swagger UI would mount only the
    // rows near the viewport (see plugins/docs.ts), so this fails if that comes back.
    const expected = Object.entries(documentedOperations(server.document)).map(
      ([tag, operations]) => ({ tag, operations: operations.sort() }),
    );
    const renderedTags = () =>
      page.locator(".opblock-tag-section").evaluateAll((sections) =>
        sections.map((section) => ({
          tag: section.querySelector(".opblock-tag")?.getAttribute("data-tag") ?? "",
          operations: [...section.querySelectorAll(".opblock")]
            .map((block) => {
              const method = block.querySelector(".opblock-summary-method")?.textContent;
              const path = block.querySelector(".opblock-summary-path")?.getAttribute("data-path");
              return `${method} ${path}`;
            })
            .sort(),
        })),
      );
    await expect.poll(renderedTags, { timeout: 30_000 }).toEqual(expected);
    const rendered = (await renderedTags()).flatMap((section) => section.operations);
    expect(await page.locator(".operations-virtual").count()).toBe(0);
    for (const operation of [
      "GET /api/v1/teams/{teamId}",
      "PUT /api/v1/pipelines/{pipelineId}/stages/{stageId}/deploy",
      "POST /api/v1/devices",
    ]) {
      expect(rendered).toContain(operation);
    }
    // The last operation on the page is there, laid out, and scrolls into view.
    const last = page.locator(".opblock").last();
    await last.scrollIntoViewIfNeeded();
    expect(await last.isVisible()).toBe(true);

    await page
      .getByRole("button", { name: /authorize/i })
      .first()
      .click();
    // A person's token (the device agent's scheme, `deviceToken`, has a form of its own).
    const person = page.locator(".modal-ux form").filter({ hasText: "bearerAuth" });
    await person.locator("#auth-bearer-value").fill(server.adminToken);
    await person.getByRole("button", { name: "Apply credentials" }).click();
    await person.getByRole("button", { name: "Close" }).click();

    const operation = page.locator("#operations-User-user-me");
    await operation.locator(".opblock-summary").click();
    await operation.getByRole("button", { name: "Try it out" }).click();
    const [call] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${server.url}/api/v1/user`),
      operation.getByRole("button", { name: "Execute" }).click(),
    ]);
    expect(call.status()).toBe(200);
    await expect
      .poll(
        () =>
          operation.locator(".live-responses-table tbody .response-col_status").first().innerText(),
        { timeout: 10_000 },
      )
      .toContain("200");

    // And one far down the page, with a path parameter.
    const team = await createTeam(server, await makeUser(server));
    const byId = page.locator("#operations-Teams-team-byId");
    await byId.locator(".opblock-summary").click();
    await byId.getByRole("button", { name: "Try it out" }).click();
    await byId.locator('input[placeholder="teamId"]').fill(team.id);
    const [teamCall] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${server.url}/api/v1/teams/${team.id}`),
      byId.getByRole("button", { name: "Execute" }).click(),
    ]);
    expect(teamCall.status()).toBe(200);
    expect((await teamCall.json()).slug).toBe(team.slug);

    // A deep link still opens its operation and scrolls to it (far down the page).
    const linked = await context.newPage();
    linked.setDefaultTimeout(10_000);
    await linked.goto(`${server.url}/api/#/Pipelines/pipelines-deploy`, { waitUntil: "commit" });
    const deploy = linked.locator("#operations-Pipelines-pipelines-deploy");
    await deploy.locator(".opblock-body").waitFor({ timeout: 30_000 });
    await expect
      .poll(
        () =>
          deploy.evaluate((element) => {
            const box = element.getBoundingClientRect();
            return box.top >= 0 && box.top < window.innerHeight;
          }),
        { timeout: 10_000 },
      )
      .toBe(true);

    expect(violations).toEqual([]);
    await context.close();
  }, 120_000);
});

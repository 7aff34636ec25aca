// Headless Chromium (Debian's package) driven by playwright-core, for tests that need a real browser.
// Where the browser is missing the browser tests skip — except in CI, where .ci/run installs it
// and a missing browser must fail rather than pass by skipping.
// The browser's globals, for the code page.evaluate runs in the page.
/// <reference lib="dom" />
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import axe from "axe-core";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { inCI, updateScreenshots } from "./env";
import { freePort, startServer, type TestServer } from "./harness";

export const CHROMIUM = "/usr/bin/chromium";

export const browserMissing = !existsSync(CHROMIUM) && !inCI;

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // As root there is no sandbox; the rest keep Chromium off the (closed) network.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** A fresh browser (no cookies) whose pages report every CSP violation and script error. */
/**
 * A server on a port of its own whose BASE_URL is the address the browser uses (so that the
 * browser's Origin is the platform's own), and a browser to open it in.
 */
export async function serverAndBrowser(
  instances?: NonNullable<Parameters<typeof startServer>[0]>["instances"],
): Promise<{ server: TestServer; browser: Browser }> {
  const port = await freePort();
  const server = await startServer({ port, baseUrl: `http://127.0.0.1:${port}`, instances });
  return { server, browser: await launchBrowser() };
}

/** Closes what `serverAndBrowser` started (either may not have started). */
export async function closeServerAndBrowser(server?: TestServer, browser?: Browser) {
  await browser?.close();
  await server?.close();
}

/** Contexts whose pages run no script: axe cannot run in them (their pages are scanned with script). */
const withoutScript = new WeakSet<BrowserContext>();

/** A fresh browser context with JavaScript off, as a person without script sees the pages. */
export async function openBrowserWithoutScript(
  browser: Browser,
  options: Parameters<Browser["newContext"]>[0] = {},
) {
  const context = await browser.newContext({ ...options, javaScriptEnabled: false });
  withoutScript.add(context);
  return context;
}

export async function openBrowser(browser: Browser) {
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
  const problems: string[] = [];
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) =>
      console.error(
        `Content-Security-Policy violation: ${event.violatedDirective} ${event.blockedURI}`,
      ),
    );
  });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on("console", (message) => {
    if (/Content.Security.Policy/i.test(message.text())) problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(`script error: ${error.message}`));
  return { context, page, problems };
}

/** Fills in and sends the sign-in page the browser is on. */
export async function signInOnPage(page: Page, username: string, password: string) {
  await page.getByLabel("Username or email").fill(username);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/**
 * What every page must be: each visible field found by its label, one heading, no sideways
 * scrolling at a phone's 375 × 667, and no serious or critical accessibility violation (axe).
 */
export async function checkPage(page: Page) {
  const fields = page
    .locator("input:not([type=hidden]):not([type=submit]), select, textarea")
    .filter({ visible: true });
  for (const field of await fields.all()) {
    const label = await field.evaluate(
      (element) =>
        (element as HTMLInputElement).labels?.[0]?.textContent?.replace(/\s+/g, " ").trim() ?? "",
    );
    expect(label, await field.evaluate((element) => element.outerHTML)).not.toBe("");
    const id = await field.getAttribute("id");
    const labelled = page.getByLabel(label, { exact: true });
    const ids = await labelled.evaluateAll((elements) => elements.map((element) => element.id));
    expect(ids, label).toContain(id);
  }
  expect(await page.locator("main h1").count()).toBe(1);
  expect(await page.locator("header").count()).toBeGreaterThanOrEqual(1);

  const size = page.viewportSize()!;
  await page.setViewportSize({ width: 375, height: 667 });
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(width, `${page.url()} is ${width}px wide at 375px`).toBeLessThanOrEqual(375);
  await page.setViewportSize(size);
  if (!withoutScript.has(page.context())) {
    expect(await axeViolations(page), page.url()).toEqual([]);
  }
}

/**
 * An accessibility scan of the page as it is (axe-core, run inside the page through the DevTools
 * protocol, so the page's own Content-Security-Policy is left as it is): the serious and critical
 * violations, each as "rule: target", so a failure names what to fix. WCAG 2.1 A and AA rules.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  const results = await page.evaluate(() =>
    (window as unknown as { axe: typeof axe }).axe.run(document, {
      runOnly: {
        type: "tag",
        values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"],
      },
      resultTypes: ["violations"],
    }),
  );
  return results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .flatMap((violation) =>
      violation.nodes.map(
        (node) => `${violation.id}: ${node.target.join(" ")} (${violation.help})`,
      ),
    );
}

const SCREENSHOTS = fileURLToPath(new URL("../../../../docs/screenshots/", import.meta.url));

/**
 * Screenshots for the README, written to docs/screenshots/ only when asked for with
 * UPDATE_SCREENSHOTS=1, so that an ordinary test run leaves the working tree as it was.
 */
export async function screenshot(page: Page, name: string, fullPage = true) {
  if (!updateScreenshots) return;
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage });
}

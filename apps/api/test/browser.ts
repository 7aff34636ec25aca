// Headless Chromium (Debian's package) driven by playwright-core, for tests that need a real browser.
// Where the browser is missing the browser tests skip — except in CI, where .ci/run installs it
// and a missing browser must fail rather than pass by skipping.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { inCI } from "./env";

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

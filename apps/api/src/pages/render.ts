// Server-rendered pages: Eta templates (output escaped unless a template asks for raw with `<%~`),
// static assets served from memory under /assets/, and the Content-Security-Policy every page
// carries. Templates and assets are files of this package, found from the package root at run time,
// so the bundle (dist/main.js) and the sources (src/) find the same ones.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Eta } from "eta";
import { API_CSP } from "../core/security-policy";

/** The directory of the nearest package.json above this module (apps/api, from src/ or dist/). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("no package.json above the pages module");
    dir = parent;
  }
  return dir;
}

/** The sources: templates are named by their path under it (`accounts/pages/sign-in`). */
const SOURCE_DIR = join(packageRoot(), "src");

/** Pages load their own script, styles and images, call only this origin and post only to it. */
export const PAGE_CSP = {
  ...API_CSP,
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", "data:"],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
};

/**
 * Route options of every page: helmet's headers with the page policy in place of the API's, and
 * a referrer policy that keeps the Origin on the pages' own form posts (under helmet's default,
 * `no-referrer`, a browser sends `Origin: null` with a form, which the CSRF check refuses) while
 * still telling other sites nothing.
 */
export const pageRoute = {
  config: {
    helmet: {
      contentSecurityPolicy: { useDefaults: false as const, directives: PAGE_CSP },
      referrerPolicy: { policy: "same-origin" as const },
    },
  },
};

/**
 * The page route for a page whose form's post may end, through redirects, at one of `sources`:
 * browsers hold the whole redirect chain of a form's post to `form-action`. The sign-in page's
 * post goes on to GET /account/authorize, which sends the browser to an instance's editor.
 */
export function pageRouteWithFormsTo(sources: string[]) {
  const directives = { ...PAGE_CSP, formAction: [...PAGE_CSP.formAction, ...sources] };
  return {
    config: {
      helmet: {
        ...pageRoute.config.helmet,
        contentSecurityPolicy: { useDefaults: false as const, directives },
      },
    },
  };
}

export interface Asset {
  body: Buffer;
  type: string;
  /** A short hash of the content: the `v` of its URL, so a changed file gets a new URL. */
  version: string;
}

const TYPES: Record<string, string> = {
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** Every file of src/pages/assets, read once. */
export function loadAssets(): Map<string, Asset> {
  const dir = join(SOURCE_DIR, "pages", "assets");
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(join(dir, name));
    const version = createHash("sha256").update(body).digest("base64url").slice(0, 12);
    assets.set(name, { body, type, version });
  }
  return assets;
}

/**
 * "2026-11-23 14:05 UTC": a time as a page shows it before its script puts it in the reader's
 * time zone (in a `<time datetime>`).
 */
export const utc = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`;

export class PageRenderer {
  private readonly eta = new Eta({
    // The shared layout and partials are in pages/templates/, an area's pages beside its code.
    views: SOURCE_DIR,
    autoEscape: true,
    // Compiled once per template; the files do not change while the server runs.
    cache: true,
  });
  private readonly urls: Record<string, string>;

  constructor(assets: Map<string, Asset>) {
    this.urls = Object.fromEntries(
      [...assets].map(([name, asset]) => [name, `/assets/${name}?v=${asset.version}`]),
    );
  }

  /**
   * The HTML of a template (its path under src/, without `.eta`), given the data it reads as
   * `it` (plus `it.asset(name)` and `it.utc(iso)`).
   */
  render(template: string, data: object): string {
    return this.eta.render(template, {
      ...data,
      utc,
      asset: (name: string) => {
        const url = this.urls[name];
        if (!url) throw new Error(`no asset ${name}`);
        return url;
      },
    });
  }
}

// `pnpm bench:pages`: the console's pages against issue 37's target, "every page under 100 ms to
// first byte on this machine". Builds and starts the API server (as `pnpm start` runs it, with its
// embedded broker) as a child process, creates through the API a team with something in every
// area, signs a second user (owner of the team, and administrator) in, walks the console from
// /teams and /admin as that user (one page of each shape), then times each page's time to first
// byte, each GET followed by the baseline's: the same session's JSON `GET /api/v1/user`. Writes
// results/<date>-pages[-<label>].{json,md}; exits 1 when a page's median is over the target or a
// page does not answer 200. See README.md, "The console's pages".
import { randomBase62 } from "@flowplane/auth";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { configOrExit, failure, prepare, runBench, startApiServer } from "./api-bench";
import { loadPagesConfig } from "./env";
import { BENCH_DIR, machineInfo } from "./machine";
import { pagesMarkdown, type PagesResult, stats } from "./pages-report";
import { stopAll } from "./processes";

const RESULTS_DIR = join(BENCH_DIR, "results");
/** Where the walk starts: the signed-in person's home, and the administrator's pages. */
const STARTS = ["/teams", "/admin"];
const BASELINE = "/api/v1/user";

const say = (text: string) => process.stdout.write(`${text}\n`);

const config = configOrExit(() => loadPagesConfig());
const failing = failure();
const { guarded } = failing;

/**
 * A page's address with its ids blanked and its query values dropped: pages of one shape are
 * walked once. An id is a path segment of 8 or more characters with a digit or a capital (the
 * server's ids are 12 random base62 characters); words such as `pipelines` stay.
 */
function shapeOf(url: URL): string {
  const path = url.pathname
    .split("/")
    .map((segment) => (/^(?=.*[0-9A-Z])[A-Za-z0-9_-]{8,}$/.test(segment) ? ":id" : segment))
    .join("/");
  const keys = [...new Set(url.searchParams.keys())].sort().join("&");
  return keys ? `${path}?${keys}` : path;
}

/** Links a walk never follows: leaving the console, or doing rather than showing. */
const NOT_WALKED = /^\/(api|account|trpc|assets|sign-out|sign-in)(\/|$)|\.csv$|\/editor(\/|$)/;

/** The same-origin links of a page (`href="/…"`), absolute, without fragments. */
function linksOf(html: string, origin: string): URL[] {
  const links: URL[] = [];
  for (const [, href] of html.matchAll(/\shref="(\/(?!\/)[^"]*)"/g)) {
    const url = new URL(href!.replaceAll("&amp;", "&").replaceAll("&#38;", "&"), origin);
    url.hash = "";
    if (!NOT_WALKED.test(url.pathname)) links.push(url);
  }
  return links;
}

interface Timed {
  status: number;
  contentType: string;
  location: string | null;
  body: string;
  /** Until `fetch` resolved: the status line and headers have arrived. */
  ttfb: number;
  /** Until the whole body has been read. */
  total: number;
}

async function timedGet(url: string, headers: Record<string, string>): Promise<Timed> {
  const t = performance.now();
  const response = await fetch(url, { headers, redirect: "manual" });
  const ttfb = performance.now() - t;
  const body = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    location: response.headers.get("location"),
    body,
    ttfb,
    total: performance.now() - t,
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  const machine = machineInfo();
  const loadAtStart = loadavg()[0]!;
  await prepare({ run: failing, maxMinutes: config.maxMinutes, skipBuild: config.skipBuild, say });
  const work = await mkdtemp(join(tmpdir(), "flowplane-bench-pages-"));
  try {
    const { url, token } = await startApiServer({
      work,
      database: { DATABASE: config.database },
      env: { INSTANCE_DRIVER: config.instanceDriver },
      readyMs: 180_000,
      run: failing,
    });
    /** An API call: as the first administrator (`token`) or in the session (`cookie`). */
    const call = async (
      method: string,
      path: string,
      body: unknown,
      as: { token: string } | { cookie: string },
    ) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          ...("token" in as
            ? { authorization: `Bearer ${as.token}` }
            : { cookie: as.cookie, origin: url }),
          ...(body !== undefined && { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return (text ? JSON.parse(text) : {}) as { id: string; meta?: { state?: string } };
    };
    const admin = { token };

    say("Creating the owner, the team and something in every area through the API …");
    const login = { username: "pages-owner", password: `bench ${randomBase62(24)}` };
    const user = await call("POST", "/api/v1/users", { ...login, name: "Pages Owner" }, admin);
    await call("PUT", `/api/v1/users/${user.id}`, { admin: true }, admin);
    const signedIn = await fetch(`${url}/account/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(login),
    });
    const cookie = signedIn.headers.getSetCookie()[0]?.split(";")[0];
    // The status only: the cookie is a credential and is never printed.
    if (signedIn.status !== 200 || !cookie?.startsWith("sid=")) {
      throw new Error(`signing in: ${signedIn.status}`);
    }
    const session = { cookie };
    // The owner makes the team in their session, as the Teams page's form does.
    const team = await call("POST", "/api/v1/teams", { name: "Pages bench" }, session);
    const application = await call(
      "POST",
      "/api/v1/applications",
      { name: "Line 1", teamId: team.id },
      session,
    );
    const instance = await call(
      "POST",
      "/api/v1/projects",
      { name: `pages-${randomBase62(6).toLowerCase()}`, applicationId: application.id },
      session,
    );
    const instanceState = await waitForInstance(call, instance.id, session);
    await call("POST", `/api/v1/projects/${instance.id}/snapshots`, { name: "First" }, session);
    const deviceBody = { name: "press-7", team: team.id, application: application.id };
    await call("POST", "/api/v1/devices", deviceBody, session);
    const groups = `/api/v1/applications/${application.id}/device-groups`;
    await call("POST", groups, { name: "Presses" }, session);
    const pipeline = await call(
      "POST",
      "/api/v1/pipelines",
      { name: "To the line", applicationId: application.id },
      session,
    );
    await call(
      "POST",
      `/api/v1/pipelines/${pipeline.id}/stages`,
      { name: "Development", instanceId: instance.id },
      session,
    );
    await call(
      "POST",
      `/api/v1/teams/${team.id}/broker/client`,
      {
        username: "sensor",
        password: "a long enough password",
        acls: [{ action: "both", pattern: "sensors/#" }],
      },
      session,
    );

    say(`Walking the console from ${STARTS.join(" and ")} (at most ${config.maxPages} pages) …`);
    const page = { cookie, accept: "text/html" };
    const seen = new Set<string>();
    const queue = STARTS.map((start) => new URL(start, url));
    const walked: { shape: string; path: string; status: number; from: string }[] = [];
    const redirects: { shape: string; to: string }[] = [];
    let absent: { shape: string; path: string; status: number }[] = [];
    /** Where each shape was first linked from (a page's shape, or "(start)"). */
    const from = new Map(queue.map((start) => [shapeOf(start), "(start)"]));
    const linked = (link: URL, by: string) => {
      const shape = shapeOf(link);
      if (from.get(shape) === "(start)" || !from.has(shape)) from.set(shape, by);
      if (!seen.has(shape)) queue.push(link);
    };
    while (queue.length > 0 && walked.length < config.maxPages) {
      const next = queue.shift()!;
      const shape = shapeOf(next);
      if (seen.has(shape)) continue;
      seen.add(shape);
      const path = next.pathname + next.search;
      const got = await guarded(timedGet(next.href, page));
      const location = got.location ? new URL(got.location, next) : undefined;
      if (got.status >= 300 && got.status < 400 && location && location.origin === next.origin) {
        // A link that redirects (`/` → `/teams`) is not a page: its target is walked instead.
        redirects.push({ shape, to: location.pathname + location.search });
        linked(location, shape);
        continue;
      }
      // A start the build does not have yet is noted, not measured (unless a page links it).
      if (got.status === 404 && from.get(shape) === "(start)") {
        absent.push({ shape, path, status: got.status });
        continue;
      }
      walked.push({ shape, path, status: got.status, from: from.get(shape) ?? "" });
      if (got.status !== 200 || !got.contentType.startsWith("text/html")) continue;
      for (const link of linksOf(got.body, url)) linked(link, shape);
    }
    // A start that answered 404 but that a page links to is a broken page after all.
    for (const start of absent.filter(({ shape }) => from.get(shape) !== "(start)")) {
      walked.push({ ...start, from: from.get(start.shape)! });
    }
    absent = absent.filter(({ shape }) => from.get(shape) === "(start)");
    const skipped = [...new Set(queue.map(shapeOf))].filter((shape) => !seen.has(shape));

    say(
      `Timing ${walked.length} pages: ${config.warmup} warm-up and ${config.requests} timed GETs each, each followed by GET ${BASELINE} …`,
    );
    const json = { cookie, accept: "application/json" };
    const baselineAll: number[] = [];
    const pages: PagesResult["pages"] = [];
    for (const { shape, path, status, from: linkedFrom } of walked) {
      for (let i = 0; i < config.warmup; i++) {
        await guarded(timedGet(`${url}${path}`, page));
        await guarded(timedGet(`${url}${BASELINE}`, json));
      }
      const ttfb: number[] = [];
      const total: number[] = [];
      const baseline: number[] = [];
      const statuses = new Set<number>([status]);
      let bytes = 0;
      for (let i = 0; i < config.requests; i++) {
        const got = await guarded(timedGet(`${url}${path}`, page));
        statuses.add(got.status);
        bytes = Buffer.byteLength(got.body);
        ttfb.push(got.ttfb);
        total.push(got.total);
        const base = await guarded(timedGet(`${url}${BASELINE}`, json));
        if (base.status !== 200) throw new Error(`GET ${BASELINE}: ${base.status}`);
        baseline.push(base.ttfb);
      }
      baselineAll.push(...baseline);
      const entry = {
        shape,
        path,
        from: linkedFrom,
        statuses: [...statuses],
        bytes,
        ttfb: stats(ttfb),
        total: stats(total),
        baseline: stats(baseline),
      };
      pages.push(entry);
      say(
        `  ${shape}: ${entry.statuses.join("/")}, median ${entry.ttfb.p50.toFixed(1)} ms (baseline ${entry.baseline.p50.toFixed(1)} ms)`,
      );
    }

    const result: PagesResult = {
      machine,
      settings: config,
      minutes: Math.round(((Date.now() - started) / 60_000) * 10) / 10,
      instanceState,
      load: { start: loadAtStart, end: loadavg()[0]! },
      baseline: { path: BASELINE, ttfb: stats(baselineAll) },
      pages,
      absent: absent.map(({ path, status }) => ({ path, status })),
      redirects,
      notWalked: skipped,
    };
    const { markdown, failures } = pagesMarkdown(result);
    say(`\n${markdown}`);
    await mkdir(RESULTS_DIR, { recursive: true });
    const base = join(
      RESULTS_DIR,
      `${String(machine.date).slice(0, 10)}-pages${config.label ? `-${config.label}` : ""}`,
    );
    await writeFile(`${base}.json`, `${JSON.stringify({ ...result, failures }, null, 2)}\n`);
    await writeFile(`${base}.md`, markdown);
    say(`Wrote ${base}.json and ${base}.md (${result.minutes} min).`);
    if (failures.length > 0) throw new Error(`target not met: ${failures.join("; ")}`);
  } finally {
    await stopAll();
    await rm(work, { recursive: true, force: true });
  }
}

/** Waits (up to 2 minutes) for the instance to run; its last state either way. */
async function waitForInstance(
  call: (
    method: string,
    path: string,
    body: unknown,
    as: { cookie: string },
  ) => Promise<{ meta?: { state?: string } }>,
  id: string,
  session: { cookie: string },
): Promise<string> {
  if (config.instanceDriver === "off") return "not run (INSTANCE_DRIVER=off)";
  const deadline = Date.now() + 120_000;
  for (;;) {
    const state = (await call("GET", `/api/v1/projects/${id}/status`, undefined, session)).meta
      ?.state;
    if (state === "running" || Date.now() > deadline) return state ?? "unknown";
    await guarded(sleep(250));
  }
}

runBench("bench:pages", failing, main);

// `pnpm bench:metrics`: what GET /metrics costs the requests it counts. Builds the API server and
// starts two, one with METRICS_TOKEN unset and one with it set, the second scraped every few
// seconds all along (as Prometheus would). Then the same load — each connection an authenticated
// GET of a team and a PUT renaming it, in turn — runs against one server at a time in short
// slices, alternating, the order swapped from one pair to the next: on a shared, noisy machine the
// drift falls on both sides alike. Reports req/s, the API process's CPU time per request (what
// other processes on the machine disturb least) and p99 of each side (all its slices together),
// and the ratios on/off, overall and per pair. Writes results/<date>-metrics[-<label>].{json,md}.
// First, in process (src/metrics-in-process.ts): the CPU a request costs through Fastify's inject
// with and without metrics, free of the network's and the other processes' noise. See README.md,
// "The metrics' cost".
import { randomBase62 } from "@flowplane/auth";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  apiCaller,
  configOrExit,
  failure,
  prepare,
  runBench,
  startApiServer,
  writeResults,
} from "./api-bench";
import { loadMetricsConfig } from "./env";
import { inProcessCost } from "./metrics-in-process";
import { load, type LoadResult, type Step } from "./load";
import { machineInfo } from "./machine";
import { cpuSecondsSplit, splitDelta, stopAll } from "./processes";

const say = (text: string) => process.stdout.write(`${text}\n`);
const config = configOrExit(() => loadMetricsConfig());
const failing = failure();
const { guarded } = failing;

type Side = "off" | "on";

/** A slice's load, and the CPU the API server's own process used meanwhile (its database not). */
type Slice = LoadResult & { cpuSeconds: number };

/** Reads /metrics every `seconds` until stopped: how many answered, and the largest in bytes. */
function scraper(url: string, token: string, seconds: number) {
  const tally = { scrapes: 0, bytes: 0, failed: undefined as string | undefined };
  const scrape = async () => {
    const reply = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    const text = await reply.text();
    if (reply.status !== 200) tally.failed = `GET /metrics: ${reply.status}`;
    else tally.scrapes++;
    tally.bytes = Math.max(tally.bytes, Buffer.byteLength(text));
  };
  const timer = setInterval(
    () => void scrape().catch((error: Error) => (tally.failed = error.message)),
    seconds * 1000,
  );
  return { tally, stop: () => clearInterval(timer) };
}

/** A server, its teams made, and the load that runs against it for `duration` seconds. */
async function platform(work: string, metricsToken: string | undefined) {
  await mkdir(work);
  const api = await startApiServer({
    work,
    database: { DATABASE: config.database },
    env: metricsToken ? { METRICS_TOKEN: metricsToken } : {},
    readyMs: 180_000,
    run: failing,
  });
  const call = apiCaller(api.url, api.token);
  const teams: string[] = [];
  for (let c = 0; c < config.connections; c++) {
    const team = await call("POST", "/api/v1/teams", {
      name: `Bench metrics ${c}`,
      slug: `bench-metrics-${c}`,
    });
    teams.push(team.id);
  }
  const headers = { authorization: `Bearer ${api.token}` };
  const write = { ...headers, "content-type": "application/json" };
  // Two renames in turn, so that each PUT changes the name (a write every time).
  const stepsOf = (connection: number): Step[] => {
    const path = `/api/v1/teams/${teams[connection]}`;
    return ["A", "B"].flatMap((name): Step[] => [
      { method: "GET", path, headers, expect: 200 },
      {
        method: "PUT",
        path,
        headers: write,
        body: JSON.stringify({ name: `Bench metrics ${connection} ${name}` }),
        expect: 200,
      },
    ]);
  };
  return {
    api,
    run: async (duration: number): Promise<Slice> => {
      const before = await cpuSecondsSplit(api.server.pid);
      const result = await guarded(
        load({ url: api.url, connections: config.connections, duration, stepsOf }),
      );
      const after = await cpuSecondsSplit(api.server.pid);
      if (result.unexpected || result.errors) {
        throw new Error(`unexpected answers: ${JSON.stringify(result.statuses)}`);
      }
      if (!before || !after) throw new Error("the API server's CPU time could not be read");
      return { ...result, cpuSeconds: splitDelta(before, after).own };
    },
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/**
 * One side's slices together: requests per second over all of them, the API process's CPU per
 * request, the median slice's p50 and p99.
 */
function sideOf(slices: Slice[]) {
  const sum = (of: (slice: Slice) => number) => slices.reduce((total, s) => total + of(s), 0);
  const requests = sum((slice) => slice.requests);
  return {
    requests,
    rps: requests / sum((slice) => slice.seconds),
    cpuMsPerRequest: (sum((slice) => slice.cpuSeconds) * 1000) / requests,
    p50: median(slices.map((slice) => slice.latencyMs.p50)),
    p99: median(slices.map((slice) => slice.latencyMs.p99)),
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  const machine = machineInfo();
  await prepare({ run: failing, maxMinutes: config.maxMinutes, skipBuild: config.skipBuild, say });
  say("In process: two apps, the same requests through inject, in alternating blocks …");
  const inProcess = await guarded(inProcessCost({ blocks: 10, perBlock: 2000 }));
  const work = await mkdtemp(join(tmpdir(), "flowplane-bench-metrics-"));
  const metricsToken = randomBase62(40);
  const pairs: { off: Slice; on: Slice }[] = [];
  let scrapes: ReturnType<typeof scraper> | undefined;
  try {
    say(`Starting two servers, metrics off and ${config.control ? "off (control)" : "on"} …`);
    const start = (side: Side) =>
      platform(join(work, side), side === "on" && !config.control ? metricsToken : undefined);
    const first = await start(config.onFirst ? "on" : "off");
    const second = await start(config.onFirst ? "off" : "on");
    const [off, on] = config.onFirst ? [second, first] : [first, second];
    if (!config.control) scrapes = scraper(on.api.url, metricsToken, config.scrapeEvery);
    const sides = { off, on };
    if (config.warmup > 0) {
      say(`Warming up, ${config.warmup} s each …`);
      await off.run(config.warmup);
      await on.run(config.warmup);
    }
    for (let round = 0; round < config.rounds; round++) {
      const order: Side[] = round % 2 === 0 ? ["off", "on"] : ["on", "off"];
      const pair: Partial<Record<Side, Slice>> = {};
      for (const side of order) pair[side] = await sides[side].run(config.duration);
      pairs.push(pair as { off: Slice; on: Slice });
      say(
        `  pair ${round + 1} of ${config.rounds}: off ${pair.off!.rps.toFixed(0)} req/s, on ${pair.on!.rps.toFixed(0)} req/s`,
      );
    }
    scrapes?.stop();
    if (scrapes?.tally.failed) throw new Error(scrapes.tally.failed);
  } finally {
    scrapes?.stop();
    await stopAll();
    await rm(work, { recursive: true, force: true });
  }
  const rpsRatios = pairs.map(({ off, on }) => on.rps / off.rps);
  const p99Ratios = pairs.map(({ off, on }) => on.latencyMs.p99 / off.latencyMs.p99);
  const off = sideOf(pairs.map((pair) => pair.off));
  const on = sideOf(pairs.map((pair) => pair.on));
  const result = {
    machine,
    config,
    minutes: Number(((Date.now() - started) / 60_000).toFixed(1)),
    off,
    on,
    inProcess,
    scrapes: scrapes?.tally.scrapes ?? 0,
    scrapeBytes: scrapes?.tally.bytes ?? 0,
    ratio: {
      rps: on.rps / off.rps,
      cpuPerRequest: on.cpuMsPerRequest / off.cpuMsPerRequest,
      p99: on.p99 / off.p99,
      medianPairRps: median(rpsRatios),
      medianPairP99: median(p99Ratios),
    },
    pairs: pairs.map(({ off: o, on: n }) => ({
      off: { rps: o.rps, p99: o.latencyMs.p99 },
      on: { rps: n.rps, p99: n.latencyMs.p99 },
    })),
  };
  const spread = (ratios: number[]) =>
    `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
  const md = [
    `# The metrics' cost (${config.database})${config.control ? ": control, metrics off on both sides" : ""}`,
    "",
    `${config.connections} connections, each an authenticated GET of a team and a PUT renaming it, in turn; ` +
      `${config.rounds} pairs of ${config.duration} s slices, one on each server, alternating ` +
      `(after ${config.warmup} s of warm-up each; the server with metrics on started ` +
      `${config.onFirst ? "first" : "second"}). ` +
      (config.control
        ? "Control: metrics off on both servers, the row `on` is the other server."
        : `Metrics on: METRICS_TOKEN set and /metrics scraped every ${config.scrapeEvery} s ` +
          `throughout (${result.scrapes} scrapes, ` +
          `${(result.scrapeBytes / 1024).toFixed(0)} KiB each at most).`),
    "",
    "| metrics | requests | req/s | API CPU ms per request | p50 ms (median slice) | p99 ms (median slice) |",
    "| --- | --- | --- | --- | --- | --- |",
    `| off | ${off.requests} | ${off.rps.toFixed(0)} | ${off.cpuMsPerRequest.toFixed(3)} | ${off.p50.toFixed(1)} | ${off.p99.toFixed(1)} |`,
    `| on | ${on.requests} | ${on.rps.toFixed(0)} | ${on.cpuMsPerRequest.toFixed(3)} | ${on.p50.toFixed(1)} | ${on.p99.toFixed(1)} |`,
    `| on / off | | ${result.ratio.rps.toFixed(3)} | ${result.ratio.cpuPerRequest.toFixed(3)} | | ${result.ratio.p99.toFixed(3)} |`,
    "",
    `In process (Fastify's inject, CPU per request, median of 10 blocks per side):`,
    "",
    "| request | off µs | on µs | on − off µs | on / off |",
    "| --- | --- | --- | --- | --- |",
    ...inProcess.map(
      (cost) =>
        `| GET ${cost.path} | ${cost.offMicros.toFixed(1)} | ${cost.onMicros.toFixed(1)} | ` +
        `${(cost.onMicros - cost.offMicros).toFixed(1)} | ${(cost.onMicros / cost.offMicros).toFixed(3)} |`,
    ),
    "",
    `Per pair, on/off: req/s median ${result.ratio.medianPairRps.toFixed(3)} (${spread(rpsRatios)}), ` +
      `p99 median ${result.ratio.medianPairP99.toFixed(3)} (${spread(p99Ratios)}).`,
    "",
  ].join("\n");
  say(`\n${md}`);
  const files = await writeResults("metrics", config.label, result, md);
  say(`Wrote ${files}.json and ${files}.md (${result.minutes} min).`);
}

runBench("bench:metrics", failing, main);

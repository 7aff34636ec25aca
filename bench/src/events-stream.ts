// `pnpm bench:events`: events per second through a team's event stream. Builds and starts the API
// server as a child process, makes a team, then writes N events through the API (team renames,
// each an audit entry and so an event), `concurrency` at a time: first with nobody listening (the
// baseline: what the writes alone cost, measured in the same run, the machine being noisy), then
// with an SSE client following GET /teams/{id}/events, timed until it has received every one.
// Reports both rates and their ratio. Writes results/<date>-events[-<label>].{json,md}. See
// README.md, "The events' stream".
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  apiCaller,
  configOrExit,
  failure,
  prepare,
  runBench,
  startApiServer,
  teamRenames,
  writeResults,
} from "./api-bench";
import { loadEventsConfig } from "./env";
import { machineInfo } from "./machine";
import { stopAll } from "./processes";

const say = (text: string) => process.stdout.write(`${text}\n`);
const config = configOrExit(() => loadEventsConfig());
const failing = failure();
const { guarded } = failing;

/** Counts the SSE events (`id:` lines) a stream delivers, until told to stop. */
async function follow(url: string, token: string, signal: AbortSignal, onEvent: () => void) {
  const response = await fetch(url, {
    headers: {
      authorization: `Bearer ${token}`,
      accept: "text/event-stream",
      "accept-encoding": "identity",
    },
    signal,
  });
  if (response.status !== 200 || !response.body) throw new Error(`stream: ${response.status}`);
  const decoder = new TextDecoder();
  let text = "";
  let opened: () => void = () => {};
  const open = new Promise<void>((resolve) => (opened = resolve));
  const done = (async () => {
    try {
      for await (const chunk of response.body!) {
        text += decoder.decode(chunk as Uint8Array, { stream: true });
        if (text.includes(": open")) opened();
        let split: number;
        while ((split = text.indexOf("\n\n")) >= 0) {
          if (text.startsWith("id:")) onEvent();
          text = text.slice(split + 2);
        }
      }
    } catch {
      // Aborted at the end of the run.
    }
  })();
  await open;
  // In an object: an async function returning the promise itself would wait for the stream's end.
  return { done };
}

async function main(): Promise<void> {
  const started = Date.now();
  const machine = machineInfo();
  await prepare({ run: failing, maxMinutes: config.maxMinutes, skipBuild: config.skipBuild, say });
  const work = await mkdtemp(join(tmpdir(), "flowplane-bench-events-"));
  try {
    const { url, token } = await startApiServer({
      work,
      database: { DATABASE: config.database },
      readyMs: 180_000,
      run: failing,
    });
    const call = apiCaller(url, token);
    const team = await call("POST", "/api/v1/teams", {
      name: "Bench events",
      slug: "bench-events",
    });
    const write = teamRenames(call, team.id, config.concurrency);

    say(`Baseline: ${config.events} events written, nobody listening …`);
    await guarded(write(Math.min(50, config.events)));
    const baselineSeconds = await guarded(write(config.events));

    say(`Streamed: ${config.events} events written and received by an SSE client …`);
    const controller = new AbortController();
    let received = 0;
    let all: () => void = () => {};
    const everyOne = new Promise<void>((resolve) => (all = resolve));
    const streaming = await guarded(
      follow(`${url}/api/v1/teams/${team.id}/events`, token, controller.signal, () => {
        if (++received >= config.events) all();
      }),
    );
    const progress = setInterval(() => say(`  received ${received} of ${config.events}`), 5000);
    const t = performance.now();
    const writeSeconds = await guarded(write(config.events));
    await guarded(everyOne);
    const streamSeconds = (performance.now() - t) / 1000;
    clearInterval(progress);
    controller.abort();
    await streaming.done;

    const result = {
      machine,
      config,
      minutes: Number(((Date.now() - started) / 60_000).toFixed(1)),
      baseline: { events: config.events, perSecond: config.events / baselineSeconds },
      streamed: {
        events: config.events,
        writtenPerSecond: config.events / writeSeconds,
        receivedPerSecond: config.events / streamSeconds,
      },
    };
    const ratio = result.streamed.receivedPerSecond / result.baseline.perSecond;
    const md = [
      `# Events through the stream (${config.database})`,
      "",
      "| what | events/s | × baseline |",
      "| --- | --- | --- |",
      `| written, nobody listening (baseline) | ${result.baseline.perSecond.toFixed(0)} | 1.00 |`,
      `| written, a stream following | ${result.streamed.writtenPerSecond.toFixed(0)} | ${(result.streamed.writtenPerSecond / result.baseline.perSecond).toFixed(2)} |`,
      `| received by the SSE client | ${result.streamed.receivedPerSecond.toFixed(0)} | ${ratio.toFixed(2)} |`,
      "",
    ].join("\n");
    say(`\n${md}`);
    const base = await writeResults("events", config.label, result, md);
    say(`Wrote ${base}.json and ${base}.md (${result.minutes} min).`);
  } finally {
    await stopAll();
    await rm(work, { recursive: true, force: true });
  }
}

runBench("bench:events", failing, main);

// `pnpm bench:webhooks`: the delivery queue's cost per write. Builds and starts the API server as a
// child process (with WEBHOOK_ALLOWED_HOSTS=127.0.0.1, so that hooks may point at loopback), makes
// a team, then times N audited writes (team renames, each an event), `concurrency` at a time:
// first with no hooks (the baseline, measured in the same run, the machine being noisy), then with
// K active hooks hearing every event, all pointing at a local receiver (a node:http server on
// 127.0.0.1 answering 204), timed until the receiver has got every one of the N×K deliveries.
// Reports writes per second with and without hooks, their ratio, and deliveries per second. Writes
// results/<date>-webhooks[-<label>].{json,md}. See README.md, "The webhooks' delivery queue".
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
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
import { loadWebhooksConfig } from "./env";
import { machineInfo } from "./machine";
import { stopAll } from "./processes";

const say = (text: string) => process.stdout.write(`${text}\n`);
const config = configOrExit(() => loadWebhooksConfig());
const failing = failure();
const { guarded } = failing;

/** The event a team rename is (docs/webhooks.md): only these deliveries are counted. */
const RENAME_EVENT = "team.settings.updated";

/**
 * A receiver on loopback answering 204 to every POST once its body is read. It counts the rename
 * deliveries by their Flowplane-Delivery id (a retry or a second send is one delivery); the hooks'
 * own `team.webhook.created` events, heard by the hooks made before, are not counted.
 */
async function receiver(onDelivery: () => void): Promise<{ server: Server; port: number }> {
  const seen = new Set<string>();
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const id = request.headers["flowplane-delivery"];
      if (request.headers["flowplane-event"] === RENAME_EVENT && typeof id === "string") {
        if (!seen.has(id)) {
          seen.add(id);
          onDelivery();
        }
      }
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function main(): Promise<void> {
  const started = Date.now();
  const machine = machineInfo();
  const expected = config.writes * config.hooks;
  await prepare({ run: failing, maxMinutes: config.maxMinutes, skipBuild: config.skipBuild, say });
  const work = await mkdtemp(join(tmpdir(), "flowplane-bench-webhooks-"));
  let received = 0;
  let all: () => void = () => {};
  const everyOne = new Promise<void>((resolve) => (all = resolve));
  const hookReceiver = await receiver(() => {
    if (++received >= expected) all();
  });
  try {
    const { url, token } = await startApiServer({
      work,
      database: { DATABASE: config.database },
      env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" },
      readyMs: 180_000,
      run: failing,
    });
    const call = apiCaller(url, token);
    const team = await call("POST", "/api/v1/teams", {
      name: "Bench webhooks",
      slug: "bench-webhooks",
    });
    const write = teamRenames(call, team.id, config.concurrency);

    say(`Baseline: ${config.writes} writes, no hooks …`);
    await guarded(write(Math.min(50, config.writes)));
    const baselineSeconds = await guarded(write(config.writes));

    say(`Hooked: ${config.writes} writes, ${config.hooks} hooks, ${expected} deliveries …`);
    for (let i = 0; i < config.hooks; i++) {
      await call("POST", `/api/v1/teams/${team.id}/webhooks`, {
        url: `http://127.0.0.1:${hookReceiver.port}/hooks/${i}`,
        eventTypes: [],
      });
    }
    const progress = setInterval(() => say(`  received ${received} of ${expected}`), 5000);
    const t = performance.now();
    const writeSeconds = await guarded(write(config.writes));
    await guarded(everyOne);
    const deliverSeconds = (performance.now() - t) / 1000;
    clearInterval(progress);

    const result = {
      machine,
      config,
      minutes: Number(((Date.now() - started) / 60_000).toFixed(1)),
      baseline: { writes: config.writes, perSecond: config.writes / baselineSeconds },
      hooked: {
        writes: config.writes,
        hooks: config.hooks,
        writtenPerSecond: config.writes / writeSeconds,
        deliveries: expected,
        deliveriesPerSecond: expected / deliverSeconds,
        /** Writes whose event reached every hook, per second. */
        deliveredWritesPerSecond: config.writes / deliverSeconds,
      },
    };
    const base = result.baseline.perSecond;
    const ratio = (perSecond: number) => (perSecond / base).toFixed(2);
    // At `concurrency` writes in flight: how much longer each write holds the API, on average.
    const costMs = 1000 / result.hooked.writtenPerSecond - 1000 / base;
    const md = [
      `# Webhooks' delivery queue (${config.database})`,
      "",
      "| what | per second | × baseline |",
      "| --- | --- | --- |",
      `| writes, no hooks (baseline) | ${base.toFixed(0)} | 1.00 |`,
      `| writes, ${config.hooks} hooks | ${result.hooked.writtenPerSecond.toFixed(0)} | ${ratio(result.hooked.writtenPerSecond)} |`,
      `| writes delivered to every hook | ${result.hooked.deliveredWritesPerSecond.toFixed(0)} | ${ratio(result.hooked.deliveredWritesPerSecond)} |`,
      `| deliveries received (${expected}) | ${result.hooked.deliveriesPerSecond.toFixed(0)} | |`,
      "",
      `The queue's cost per write: ${costMs.toFixed(2)} ms (${config.concurrency} writes at a time).`,
      "",
    ].join("\n");
    say(`\n${md}`);
    const files = await writeResults("webhooks", config.label, result, md);
    say(`Wrote ${files}.json and ${files}.md (${result.minutes} min).`);
  } finally {
    await stopAll();
    await new Promise((resolve) => hookReceiver.server.close(resolve));
    await rm(work, { recursive: true, force: true });
  }
}

runBench("bench:webhooks", failing, main);

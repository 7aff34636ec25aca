// `pnpm bench:sandbox`: what the sandbox costs a hosted instance. Starts the same Node-RED with
// the local driver in its bubblewrap sandbox and without one (INSTANCE_ISOLATION=off), in turns,
// and measures the start (until the editor answers), the memory of everything the instance runs
// (bubblewrap's two processes and Node-RED: RSS, and PSS, which shares pages fairly) once it
// answers, and the stop. Writes results/<date>-instance-sandbox.{json,md}. See README.md.
import { LocalDriver, NODE_RED_VERSION } from "@flowplane/runtime";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { request } from "node:http";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { BENCH_DIR, machineInfo } from "./machine";

const RESULTS_DIR = join(BENCH_DIR, "results");
const say = (text: string) => process.stdout.write(`${text}\n`);

function option(name: string, fallback: number): number {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  const value = given ? Number(given.slice(name.length + 3)) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number`);
  return value;
}

interface Sample {
  startMs: number;
  stopMs: number;
  processes: number;
  rssKiB: number;
  pssKiB: number;
  nodeRedRssKiB: number;
}

/** The processes an instance runs: those carrying its port in their environment. */
/** An editor's answer over its Unix socket (no instance has a TCP port). */
function get(socketPath: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request({ socketPath, path }, (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => (text += chunk));
      response.on("end", () => resolve(text));
      response.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

async function memoryOf(id: string) {
  let processes = 0;
  let rssKiB = 0;
  let pssKiB = 0;
  let nodeRedRssKiB = 0;
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const environ = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "");
    if (!environ.split("\0").includes(`BENCH_INSTANCE=${id}`)) continue;
    const status = await readFile(`/proc/${name}/status`, "utf8").catch(() => "");
    const rollup = await readFile(`/proc/${name}/smaps_rollup`, "utf8").catch(() => "");
    const rss = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    processes++;
    rssKiB += rss;
    pssKiB += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    if ((await readFile(`/proc/${name}/cmdline`, "utf8")).startsWith("node-red")) {
      nodeRedRssKiB += rss;
    }
  }
  return { processes, rssKiB, pssKiB, nodeRedRssKiB };
}

async function measure(driver: LocalDriver, round: number): Promise<Sample> {
  const id = `bench-${round}-${Math.random().toString(36).slice(2, 10)}`;
  const spec = {
    id,
    name: id,
    teamId: "bench",
    nodeRedVersion: NODE_RED_VERSION,
    env: { BENCH_INSTANCE: id },
    platformUrl: "",
    token: "",
  };
  await driver.create(spec);
  const started = performance.now();
  await driver.start(spec);
  const startMs = performance.now() - started;
  const { endpoint } = await driver.status(id);
  // Once it has answered its editor's API, as after a person opened it.
  await get(endpoint!.socketPath, "/settings");
  await get(endpoint!.socketPath, "/flows");
  const memory = await memoryOf(id);
  const stopping = performance.now();
  await driver.stop(id);
  const stopMs = performance.now() - stopping;
  await driver.remove(id);
  return { startMs, stopMs, ...memory };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function main() {
  const rounds = option("rounds", 5);
  const root = await mkdtemp(join(tmpdir(), "flowplane-bench-sandbox-"));
  const sandboxed = new LocalDriver({ root: join(root, "sandboxed") });
  // As root, no instance runs outside a sandbox (it would be root): the baseline is then a
  // sandbox on the host's network, which is what the network namespace adds to.
  const bare = new LocalDriver(
    process.getuid?.() === 0
      ? { root: join(root, "bare"), network: "host" }
      : { root: join(root, "bare"), isolation: "off" },
  );
  try {
    const probing = performance.now();
    const isolation = await sandboxed.isolation();
    const probeMs = performance.now() - probing;
    if (isolation.mode !== "sandbox") {
      throw new Error(`no sandbox on this machine: ${isolation.reason}`);
    }
    say(`Sandbox: ${JSON.stringify(isolation)} (found in ${probeMs.toFixed(0)} ms)`);
    // One of each first, unmeasured: the disk cache holds Node-RED's files for both alike.
    await measure(sandboxed, 0);
    await measure(bare, 0);
    const samples: Record<"sandbox" | "none", Sample[]> = { sandbox: [], none: [] };
    for (let round = 1; round <= rounds; round++) {
      // In turns, so that a change in the machine's load touches both alike.
      for (const [kind, driver] of [
        ["sandbox", sandboxed],
        ["none", bare],
      ] as const) {
        const sample = await measure(driver, round);
        samples[kind].push(sample);
        say(
          `${kind.padEnd(7)} round ${round}: start ${sample.startMs.toFixed(0)} ms, ` +
            `stop ${sample.stopMs.toFixed(0)} ms, ${sample.processes} processes, ` +
            `RSS ${(sample.rssKiB / 1024).toFixed(1)} MiB, PSS ${(sample.pssKiB / 1024).toFixed(1)} MiB`,
        );
      }
    }
    const summary = Object.fromEntries(
      (["sandbox", "none"] as const).map((kind) => {
        const of = (key: keyof Sample) => median(samples[kind].map((s) => s[key]));
        return [
          kind,
          {
            startMs: of("startMs"),
            stopMs: of("stopMs"),
            processes: of("processes"),
            rssMiB: of("rssKiB") / 1024,
            pssMiB: of("pssKiB") / 1024,
            nodeRedRssMiB: of("nodeRedRssKiB") / 1024,
          },
        ];
      }),
    ) as unknown as Record<"sandbox" | "none", Record<string, number>>;
    const row = (label: string, key: string, unit: string, digits: number) => {
      const sandbox = summary.sandbox[key]!;
      const none = summary.none[key]!;
      return `| ${label} | ${sandbox.toFixed(digits)} ${unit} | ${none.toFixed(digits)} ${unit} | ${(
        (sandbox / none) *
        100
      ).toFixed(0)} % |`;
    };
    const machine = machineInfo();
    const table = [
      `Medians of ${rounds} rounds each, in turns; Node-RED ${NODE_RED_VERSION}, ${machine.node}, ` +
        `${machine.cpus} × ${machine.cpuModel}, ${machine.memory}, commit ${machine.commit}. ` +
        `Sandbox: ${isolation.user === "per-instance" ? "per-instance user ids" : "the platform's user id"}; ` +
        `found once at start in ${probeMs.toFixed(0)} ms. Load average at the end: ` +
        `${loadavg()
          .map((load) => load.toFixed(1))
          .join(", ")} (the machine's other work is in these figures too).`,
      "",
      `| | sandbox | ${process.getuid?.() === 0 ? "sandbox on the host's network" : "none"} | ratio |`,
      "| --- | --- | --- | --- |",
      row("start (until the editor answers)", "startMs", "ms", 0),
      row("stop", "stopMs", "ms", 0),
      `| processes | ${summary.sandbox.processes} | ${summary.none.processes} | |`,
      row("RSS, all processes", "rssMiB", "MiB", 1),
      row("PSS, all processes", "pssMiB", "MiB", 1),
      row("RSS, Node-RED alone", "nodeRedRssMiB", "MiB", 1),
    ].join("\n");
    say(`\n${table}`);
    await mkdir(RESULTS_DIR, { recursive: true });
    const name = `${String(machine.date).slice(0, 10)}-instance-sandbox`;
    await writeFile(
      join(RESULTS_DIR, `${name}.json`),
      `${JSON.stringify({ machine, isolation, probeMs, rounds, samples, summary }, null, 2)}\n`,
    );
    await writeFile(join(RESULTS_DIR, `${name}.md`), `${table}\n`);
    say(`\nWritten: results/${name}.json and .md`);
  } finally {
    await sandboxed.close();
    await bare.close();
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

// Diagnostic, not server code: `pnpm bench --server-preload=experiments/memory-report.mjs`
//
// Writes the server's memory split (RSS, V8 heap by space, external and array buffers) once a
// second as JSON lines to <tmpdir>/flowplane-bench-memory-<pid>.jsonl, to see what the RSS is
// made of under load.
import { appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { setInterval } from "node:timers";
import { join } from "node:path";
import process from "node:process";
import { getHeapSpaceStatistics } from "node:v8";

const file = join(tmpdir(), `flowplane-bench-memory-${process.pid}.jsonl`);
const MB = 1024 * 1024;
const round = (bytes) => Math.round((bytes / MB) * 10) / 10;

const timer = setInterval(() => {
  const usage = process.memoryUsage();
  const spaces = Object.fromEntries(
    getHeapSpaceStatistics().map((s) => [s.space_name, round(s.space_size)]),
  );
  const sample = {
    t: Date.now(),
    rss: round(usage.rss),
    heapTotal: round(usage.heapTotal),
    heapUsed: round(usage.heapUsed),
    external: round(usage.external),
    arrayBuffers: round(usage.arrayBuffers),
    spaces,
  };
  appendFileSync(file, `${JSON.stringify(sample)}\n`);
}, 1000);
timer.unref();
process.stderr.write(`memory samples: ${file}\n`);

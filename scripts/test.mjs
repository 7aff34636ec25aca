// `pnpm test`: every package's tests (`turbo run test`, extra arguments passed on, e.g.
// `--filter=@flowplane/api`), then one line for the whole run. Colour only at a terminal: piped
// into a file or a CI log, no escape codes (NO_COLOR for every tool, turbo's own included).
import { spawn } from "node:child_process";

const terminal = process.stdout.isTTY === true;
const env = { ...process.env };
if (!terminal) {
  env.NO_COLOR = "1";
  delete env.FORCE_COLOR;
}

const args = [
  "exec",
  "turbo",
  "run",
  "test",
  // Every package's tests run to their end even when another's fail, so that one red run reports
  // every failure (turbo stops the others at the first by default).
  "--continue",
  ...(terminal ? [] : ["--no-color"]),
  ...process.argv.slice(2),
];
const child = spawn("pnpm", args, {
  env,
  stdio: ["inherit", "pipe", "pipe"],
});

// Vitest's "Tests  12 passed | 1 skipped (13)" of each package, read as it goes by.
const totals = { passed: 0, failed: 0, skipped: 0, files: 0 };
let packages = 0;
const escape = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
function count(text) {
  for (const line of text.replace(escape, "").split("\n")) {
    const tests = /\bTests\s+(.*)\(\d+\)\s*$/.exec(line);
    if (tests) {
      packages++;
      for (const [, n, what] of tests[1].matchAll(/(\d+) (passed|failed|skipped|todo)/g)) {
        if (what in totals) totals[what] += Number(n);
      }
    }
    const files = /\bTest Files\s+.*\((\d+)\)\s*$/.exec(line);
    if (files) totals.files += Number(files[1]);
  }
}

let pending = "";
function pass(stream, target) {
  stream.on("data", (chunk) => {
    target.write(chunk);
    pending += chunk;
    const end = pending.lastIndexOf("\n");
    if (end >= 0) {
      count(pending.slice(0, end));
      pending = pending.slice(end + 1);
    }
  });
}
pass(child.stdout, process.stdout);
pass(child.stderr, process.stderr);

child.on("exit", (code, signal) => {
  count(pending);
  const ok = code === 0;
  const line =
    `tests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped ` +
    `in ${totals.files} files of ${packages} packages — ${ok ? "all green" : `FAILED (${signal ?? `exit ${code}`})`}`;
  process.stdout.write(`\n${line}\n`);
  process.exit(code ?? 1);
});

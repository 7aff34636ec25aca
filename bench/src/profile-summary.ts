// Summarizes a V8 .cpuprofile (from `pnpm bench --cpu-prof`): the functions with the most self
// time, the most inclusive time, and self time by package. Frames of the bundled server
// (apps/api/dist/main.js) are mapped back to their source files through its source map.
//
//   pnpm --filter @flowplane/bench profile:summary [file.cpuprofile ...] [--top=25]
//
// Without files: the newest profile in results/profiles/.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ROOT = resolve(BENCH_DIR, "..");
const PROFILES = join(BENCH_DIR, "results", "profiles");

const maps = new Map<string, SourceMap | null>();
function sourceMapOf(path: string): SourceMap | null {
  if (!maps.has(path)) {
    const mapPath = `${path}.map`;
    maps.set(
      path,
      existsSync(mapPath) ? new SourceMap(JSON.parse(readFileSync(mapPath, "utf8"))) : null,
    );
  }
  return maps.get(path)!;
}

/** "name (file:line)", with bundle positions mapped to the source and paths made short. */
function describe(frame: CallFrame): { key: string; where: string; pkg: string } {
  const name = frame.functionName || "(anonymous)";
  if (!frame.url) return { key: name, where: "", pkg: name.startsWith("(") ? name : "(native)" };
  let file = frame.url.replace(/^file:\/\//, "");
  let line = frame.lineNumber + 1;
  if (file.endsWith("/dist/main.js")) {
    const entry = sourceMapOf(file)?.findEntry(frame.lineNumber, frame.columnNumber);
    if (entry && "originalSource" in entry && entry.originalSource) {
      file = resolve(dirname(file), entry.originalSource.replace(/^file:\/\//, ""));
      line = entry.originalLine + 1;
    }
  }
  const modules = file.lastIndexOf("/node_modules/");
  let pkg: string;
  if (modules >= 0) {
    const rest = file.slice(modules + "/node_modules/".length).split("/");
    pkg = rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
    file = `${pkg}/${rest.slice(pkg.split("/").length).join("/")}`;
  } else if (file.startsWith("node:")) {
    pkg = "node (internal)";
  } else {
    const local = relative(ROOT, file);
    pkg = local.startsWith("..") ? "other" : `flowplane ${local.split("/").slice(0, 2).join("/")}`;
    file = local.startsWith("..") ? file : local;
  }
  const where = `${file}:${line}`;
  return { key: `${name} ${where}`, where, pkg };
}

function summarize(path: string, top: number): string {
  const profile = JSON.parse(readFileSync(path, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const info = new Map(profile.nodes.map((n) => [n.id, describe(n.callFrame)]));

  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const packages = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const d = info.get(id)!;
    total += dt;
    if (d.key === "(idle)") {
      idle += dt;
      continue;
    }
    self.set(d.key, (self.get(d.key) ?? 0) + dt);
    packages.set(d.pkg, (packages.get(d.pkg) ?? 0) + dt);
    const seen = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const key = info.get(n)!.key;
      if (seen.has(key) || byId.get(n)!.callFrame.functionName === "(root)") continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt);
    }
  }
  const busy = total - idle;
  const rows = (map: Map<string, number>, n: number) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(
        ([key, us]) =>
          `  ${((us / busy) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`,
      )
      .join("\n");
  return [
    `${path}`,
    `  ${(total / 1e6).toFixed(1)} s sampled, ${(idle / 1e6).toFixed(1)} s idle, ${(busy / 1e6).toFixed(1)} s busy (percentages are of busy time)`,
    "",
    `Self time by package:`,
    rows(packages, 15),
    "",
    `Top ${top} functions by self time:`,
    rows(self, top),
    "",
    `Top ${top} functions by inclusive time (self + callees):`,
    rows(inclusive, top),
    "",
  ].join("\n");
}

const args = process.argv.slice(2).filter((a) => a !== "--");
const topArg = args.find((a) => a.startsWith("--top="));
const top = topArg ? Number(topArg.slice(6)) : 25;
let files = args.filter((a) => !a.startsWith("--"));
if (files.length === 0) {
  const found = existsSync(PROFILES)
    ? readdirSync(PROFILES)
        .filter((f) => f.endsWith(".cpuprofile"))
        .map((f) => join(PROFILES, f))
        .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
    : [];
  if (found.length === 0) {
    process.stderr.write(`No .cpuprofile in ${PROFILES}: run \`pnpm bench --cpu-prof\` first.\n`);
    process.exit(1);
  }
  files = [found[0]!];
}
for (const file of files) process.stdout.write(`${summarize(resolve(file), top)}\n`);

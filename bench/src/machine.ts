// What a result file records about where it was measured: the machine, Node, the commit, PGlite.
import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { cpus, release, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const ROOT = resolve(BENCH_DIR, "..");

export async function pgliteVersion(): Promise<string> {
  const path = join(BENCH_DIR, "node_modules", "@electric-sql", "pglite", "package.json");
  return (JSON.parse(await readFile(path, "utf8")) as { version: string }).version;
}

export function machineInfo(): Record<string, string | number> {
  let commit = "unknown";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: ROOT,
      encoding: "utf8",
    }).trim();
    // Changes to the bench itself do not change what is measured.
    const dirty = execFileSync(
      "git",
      ["status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench"],
      { cwd: ROOT, encoding: "utf8" },
    ).trim();
    if (dirty) commit += " (with uncommitted changes)";
  } catch {
    // not a git checkout
  }
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    memory: `${Math.round(totalmem() / 1024 ** 3)} GiB`,
    os: `${process.platform} ${release()}`,
    commit,
    date: new Date().toISOString(),
  };
}

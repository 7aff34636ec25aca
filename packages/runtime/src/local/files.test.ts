// The tenant's side of the platform's work on its files: while the platform (root) empties an
// instance's tmp or gives its tree to the instance's user id, a process of the instance swaps a
// directory there for a link to a directory outside, again and again (renameat2's exchange, the
// fastest swap there is). Nothing outside may be deleted or re-owned.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { chownTree, emptyDirectory } from "./files";

const isRoot = process.getuid?.() === 0;
let base: string;

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/**
 * A process of the tenant's: between `swap()` and `stop()`, exchanges `dir/d` (a directory) and
 * `dir/l` (a link to `outside`) as fast as it can. One process for all rounds (a start of Python
 * takes long on a loaded machine).
 */
function swapper(dir: string, outside: string) {
  const script = `
import ctypes, os, select, sys
libc = ctypes.CDLL(None, use_errno=True)
d, l = os.path.join(sys.argv[1], "d"), os.path.join(sys.argv[1], "l")
for command in sys.stdin:
    if command.strip() != "swap": break
    print("swapping", flush=True)
    while not select.select([sys.stdin], [], [], 0)[0]:
        for _ in range(200):
            if libc.renameat2(-100, d.encode(), -100, l.encode(), 2) != 0:
                try: os.symlink(sys.argv[2], l)
                except OSError: pass
    sys.stdin.readline()
    print("stopped", flush=True)
`;
  const child = spawn("python3", ["-c", script, dir, outside], {
    stdio: ["pipe", "pipe", "ignore"],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const say = async (command: string) => {
    child.stdin.write(`${command}\n`);
    await lines.next();
  };
  return { swap: () => say("swap"), stop: () => say("stop"), end: () => child.kill("SIGKILL") };
}

/** A directory `dir/d` of many files (so that walking it takes a while) and the link `dir/l`. */
async function bait(dir: string, outside: string) {
  await rm(dir, { recursive: true, force: true });
  await mkdir(join(dir, "d"), { recursive: true });
  await Promise.all(Array.from({ length: 200 }, (_, i) => writeFile(join(dir, "d", `f${i}`), "")));
  await symlink(outside, join(dir, "l"));
}

async function victims(outside: string, count: number) {
  await mkdir(outside, { recursive: true });
  await Promise.all(
    Array.from({ length: count }, (_, i) => writeFile(join(outside, `victim${i}`), "mine")),
  );
}

describe("the platform's work on an instance's files", { timeout: 120_000 }, () => {
  it("empties tmp without deleting anything outside, whatever a link swapped in meanwhile", async () => {
    base = await mkdtemp(join(tmpdir(), "flowplane-files-"));
    const tmp = join(base, "tmp");
    const outside = join(base, "outside");
    await victims(outside, 50);
    const swapping = swapper(tmp, outside);
    try {
      for (let round = 0; round < 40; round++) {
        await bait(tmp, outside);
        await swapping.swap();
        // Failing is allowed (the tree changed under it); reaching outside is not.
        await emptyDirectory(tmp).catch(() => {});
        await swapping.stop();
        expect((await readdir(outside)).length, `round ${round}`).toBe(50);
      }
    } finally {
      swapping.end();
    }
  });

  it.runIf(isRoot)(
    "gives a tree to the instance's user id without re-owning anything outside, whatever a link swapped in meanwhile",
    async () => {
      base = await mkdtemp(join(tmpdir(), "flowplane-files-"));
      const tree = join(base, "userDir");
      const outside = join(base, "outside");
      await victims(outside, 50);
      const swapping = swapper(tree, outside);
      try {
        for (let round = 0; round < 40; round++) {
          await bait(tree, outside);
          await swapping.swap();
          await chownTree(tree, 1_879_048_200, 1_879_048_192).catch(() => {});
          await swapping.stop();
          for (const name of await readdir(outside)) {
            expect((await stat(join(outside, name))).uid, `round ${round}`).toBe(0);
          }
        }
      } finally {
        swapping.end();
      }
    },
  );
});

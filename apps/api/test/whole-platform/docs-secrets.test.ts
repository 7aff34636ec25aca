// The commands README and docs/ give are run as written, by people and by scripts: none of them
// puts a token on a command line (where `ps`, shell history and CI logs show it). A token goes to
// curl on its standard input (`-H @-` or `-K-` with a here-string), to the CLI from a file or a pipe.
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");

async function documents(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, "docs"))).filter((name) => name.endsWith(".md"));
  return ["README.md", ...docs.map((name) => join("docs", name))];
}

/** Each shell command of a document's `sh` blocks, continuation lines joined. */
function commands(markdown: string): string[] {
  return [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) =>
    block[1]!
      .replace(/\\\n/g, " ")
      .split("\n")
      .filter((line) => line.trim() !== "" && !line.trim().startsWith("#")),
  );
}

/** The command with its here-strings (`<<< "…"`, read on standard input) taken out. */
const argumentsOf = (command: string) => command.replace(/<<<\s*"(?:[^"\\]|\\.)*"/g, "");

test("no command in README or docs/ puts a token on a command line", async () => {
  const found: string[] = [];
  for (const file of await documents()) {
    for (const command of commands(await readFile(join(ROOT, file), "utf8"))) {
      const args = argumentsOf(command);
      if (/Bearer \$|--token[= ]+["']?\$|--password[= ]+["']?\$/i.test(args)) {
        found.push(`${file}: ${command.trim()}`);
      }
    }
  }
  expect(found).toEqual([]);
});

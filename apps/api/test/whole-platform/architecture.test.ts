// The layout's rules, read from the source files (docs/architecture.md, "Imports point downward
// only"): an area of the API uses another only through that area's index.ts, type imports
// included; no file imports itself around a circle, in any package's or app's src; no source file
// is over 400 lines; app.ts only lists (under 120 lines, no path in it); no regular expression
// over the URL decides authentication or parsing (the context a route is registered in does);
// docs/architecture.md names every file of apps/api/src. Imports are found by a regular expression over each file's `from "…"`,
// `import "…"` and `import("…")` specifiers; only relative ones, naming a file, count.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repository = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
const apiSrc = join(repository, "apps/api/src");

/** The folders of apps/api/src that are floors beneath the areas, not areas. */
const FLOORS = new Set(["core", "plugins", "pages"]);
const MAX_LINES = 400;

/** Every `src` folder of the packages and apps. */
const sourceRoots = ["packages", "apps"].flatMap((group) =>
  readdirSync(join(repository, group))
    .map((name) => join(repository, group, name, "src"))
    .filter((root) => existsSync(root)),
);

function typescriptFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return typescriptFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

const SPECIFIER = /\bfrom\s+["']([^"']+)["']|\bimport\s*\(?\s*["']([^"']+)["']/g;

/** The files of this repository a file imports (relative specifiers that name a file). */
function importsOf(file: string): string[] {
  const source = readFileSync(file, "utf8");
  return [...source.matchAll(SPECIFIER)].flatMap((match) => {
    const specifier = match[1] ?? match[2]!;
    if (!specifier.startsWith(".")) return [];
    const base = resolve(dirname(file), specifier);
    const found = [base, `${base}.ts`, base.replace(/\.js$/, ".ts"), join(base, "index.ts")].find(
      (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
    );
    return found ? [found] : [];
  });
}

const name = (file: string) => relative(repository, file);

/** The circles of files (strongly connected components of two or more, or a file importing itself). */
function circles(files: string[]): string[][] {
  const inRoot = new Set(files);
  const graph = new Map(
    files.map((file) => [file, importsOf(file).filter((target) => inRoot.has(target))]),
  );
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.includes(file)) found.push(component);
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** The area a file of apps/api/src belongs to; undefined for the root's files and the floors. */
function areaOf(file: string): string | undefined {
  const parts = relative(apiSrc, file).split(sep);
  return parts.length > 1 && !FLOORS.has(parts[0]!) ? parts[0] : undefined;
}

describe("the layout", () => {
  const apiFiles = typescriptFiles(apiSrc);

  it("areas of the API import each other only through their index.ts", () => {
    const offending = apiFiles.flatMap((file) =>
      importsOf(file)
        .filter((target) => {
          const from = areaOf(file);
          const to = areaOf(target);
          return (
            from !== undefined &&
            to !== undefined &&
            from !== to &&
            target !== join(apiSrc, to, "index.ts")
          );
        })
        .map((target) => `${name(file)} imports ${name(target)}`),
    );
    expect(offending, "import the other area's index.ts (and export the name there)").toEqual([]);
  });

  it("the floors beneath the areas (core/, plugins/, pages/) import no area", () => {
    const offending = apiFiles
      .filter((file) => FLOORS.has(relative(apiSrc, file).split(sep)[0]!))
      .flatMap((file) =>
        importsOf(file)
          .filter((target) => areaOf(target) !== undefined)
          .map((target) => `${name(file)} imports ${name(target)}`),
      );
    expect(offending).toEqual([]);
  });

  it("the areas' imports of each other form no circle", () => {
    const edges = new Map<string, Set<string>>();
    for (const file of apiFiles) {
      const from = areaOf(file);
      if (from === undefined) continue;
      for (const target of importsOf(file)) {
        const to = areaOf(target);
        if (to !== undefined && to !== from) {
          edges.set(from, (edges.get(from) ?? new Set()).add(to));
        }
      }
    }
    // Each area's index.ts stands for the area: a circle of areas is a circle of their indexes.
    const offending: string[] = [];
    const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
      [...(edges.get(from) ?? [])].some(
        (next) => next === to || (!seen.has(next) && reaches(next, to, seen.add(next))),
      );
    for (const [from, targets] of edges) {
      for (const to of targets) if (reaches(to, from)) offending.push(`${from} -> ${to}`);
    }
    expect(
      offending,
      "each of these imports between areas leads back, directly or around a loop",
    ).toEqual([]);
  });

  it.each(sourceRoots.map((root) => [name(root), root]))("%s has no circle of files", (_, root) => {
    const found = circles(typescriptFiles(root)).map((component) =>
      component.map(name).sort().join(" , "),
    );
    expect(found, "these files import each other around a circle").toEqual([]);
  });

  it(`no source file is over ${MAX_LINES} lines`, () => {
    const offending = sourceRoots
      .flatMap((root) => typescriptFiles(root))
      .filter((file) => !/\.test\.tsx?$/.test(file))
      .map((file) => {
        const text = readFileSync(file, "utf8");
        return { file, lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0) };
      })
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${name(file)}: ${lines} lines`);
    expect(offending, `split these files (at most ${MAX_LINES} lines each)`).toEqual([]);
  });

  it("app.ts lists the areas and the cross-cutting plugins: under 120 lines, no path in it", () => {
    const app = readFileSync(join(apiSrc, "app.ts"), "utf8");
    const lines = app.split("\n").length - 1;
    expect(lines, "app.ts's length").toBeLessThan(120);
    // A path, a route or a path pattern: a string or regular expression starting with "/" (the
    // import specifiers are "./…").
    const paths = [...app.matchAll(/["'`]\/[^"'`]*["'`]|\/\^\\\//g)].map((match) => match[0]);
    expect(paths, "app.ts names no path").toEqual([]);
  });

  it("no regular expression over the URL decides who is authenticated or what is parsed", () => {
    const deciders = [
      "plugins/authentication.ts",
      "plugins/people.ts",
      "plugins/csrf.ts",
      "plugins/request-parsing.ts",
      "plugins/areas.ts",
      "core/authenticator.ts",
      ...readdirSync(join(apiSrc, "core/credentials")).map((file) => `core/credentials/${file}`),
    ];
    const offending = deciders.flatMap((file) => {
      const source = readFileSync(join(apiSrc, file), "utf8");
      // A regular expression literal matching from a "/": a path pattern.
      return [...source.matchAll(/\/\^?\\\/[^\n]*\//g)].map((match) => `${file}: ${match[0]}`);
    });
    expect(offending, "decide by the context a route is registered in").toEqual([]);
    // Nor may an area hand the platform paths to leave alone.
    const handedUp = apiFiles.filter((file) =>
      /ownPaths|checkedByTheirRoutes/.test(readFileSync(file, "utf8")),
    );
    expect(handedUp.map(name)).toEqual([]);
  });

  it("docs/architecture.md names every source file of apps/api/src", () => {
    const docs = readFileSync(join(repository, "docs/architecture.md"), "utf8");
    const unnamed = apiFiles
      .map((file) => relative(apiSrc, file))
      .filter((file) => {
        // Named as a file (`kind.ts`) or, for a plugin, by its name (`request-parsing`).
        const base = file.split(sep).pop()!;
        return !docs.includes(base) && !docs.includes(`\`${base.replace(/\.ts$/, "")}\``);
      });
    expect(unnamed, "say in docs/architecture.md what these files hold").toEqual([]);
  });
});

// The published packages, proved from the outside: contract, client and CLI packed as `pnpm pack`
// makes them, installed with npm into a project of its own outside the workspace (their registry
// dependencies from the registry), against a running platform. A program using the client
// type-checks (one with a wrong input does not), compiles and runs; the packed CLI answers --help
// and `whoami`, its token from the environment.
import { buildApp, ensureInitialAdmin, INITIAL_TOKEN_FILE } from "@flowplane/api";
import { createTestDb } from "@flowplane/db/testing";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inheritedPath } from "./env";

const exec = promisify(execFile);
const ROOT = join(import.meta.dirname, "../../..");
const PACKAGES = ["packages/contract", "packages/client", "apps/cli"];
const TYPESCRIPT = (
  createRequire(import.meta.url)("typescript/package.json") as { version: string }
).version;

let project: string;
let platform: { url: string; token: string; close(): Promise<void> };

/** Runs a command in the scratch project, with nothing of the workspace in its environment. */
const run = (command: string, args: string[], env: Record<string, string> = {}) =>
  exec(command, args, {
    cwd: project,
    env: {
      PATH: inheritedPath,
      HOME: project,
      XDG_CONFIG_HOME: join(project, ".config"),
      ...env,
    },
    maxBuffer: 1 << 24,
  }).catch((error: Error & { stdout: string; stderr: string }) => {
    throw Object.assign(new Error(`${command} ${args.join(" ")}: ${error.stdout}${error.stderr}`), {
      stdout: error.stdout,
    });
  });

async function startPlatform() {
  const { db, drop } = await createTestDb();
  const dataDir = await mkdtemp(join(tmpdir(), "flowplane-outside-data-"));
  const secret = "x".repeat(40);
  await ensureInitialAdmin(db, secret, dataDir);
  const token = (await readFile(join(dataDir, INITIAL_TOKEN_FILE), "utf8")).trim();
  const app = await buildApp({ db, tokenSecret: secret, baseUrl: "http://127.0.0.1" });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return {
    url,
    token,
    async close() {
      await app.close();
      await drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Packs the published packages (built first, turbo's cache allowing) into `into`. */
async function packPublished(into: string): Promise<string[]> {
  const filters = ["@flowplane/contract", "@flowplane/client", "@flowplane/cli"].map(
    (name) => `--filter=${name}`,
  );
  await exec("pnpm", ["exec", "turbo", "run", "build", ...filters, "--output-logs=errors-only"], {
    cwd: ROOT,
  });
  for (const dir of PACKAGES) {
    await exec("pnpm", ["pack", "--pack-destination", into], { cwd: join(ROOT, dir) });
  }
  const tarballs = (await readdir(into)).filter((file) => file.endsWith(".tgz"));
  expect(tarballs).toHaveLength(PACKAGES.length);
  return tarballs.map((file) => join(into, file));
}

const PROGRAM = `import { createFlowplaneClient, flowplaneError } from "@flowplane/client";

declare const process: { env: Record<string, string | undefined> };

const client = createFlowplaneClient({
  url: process.env.FLOWPLANE_URL ?? "",
  token: process.env.FLOWPLANE_TOKEN ?? "",
});
const me = await client.user.me.query();
const team = await client.team.create.mutate({ name: "Outside" });
const found = await client.team.byId.query({ teamId: team.id });
let missing: string | undefined;
try {
  await client.team.byId.query({ teamId: "no-such-team" });
} catch (error) {
  const failure = flowplaneError(error);
  const code: "not_found" | "forbidden" | undefined =
    failure?.code === "not_found" || failure?.code === "forbidden" ? failure.code : undefined;
  missing = code;
}
console.log(JSON.stringify({ admin: me.admin, team: found.name, members: found.memberCount, missing }));
`;

const WRONG = `import { createFlowplaneClient } from "@flowplane/client";

const client = createFlowplaneClient({ url: "http://127.0.0.1", token: "t" });
await client.team.byId.query({ teamId: 42 });
`;

describe("the published packages, installed outside the workspace", () => {
  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), "flowplane-outside-"));
    const [tarballs, started] = await Promise.all([
      mkdir(join(project, "tarballs")).then(() => packPublished(join(project, "tarballs"))),
      startPlatform(),
    ]);
    platform = started;
    await writeFile(
      join(project, "package.json"),
      JSON.stringify({ name: "outside", private: true, type: "module" }, null, 2),
    );
    const compilerOptions = {
      target: "es2022",
      module: "nodenext",
      moduleResolution: "nodenext",
      strict: true,
      // tRPC's declarations name Disposable; the program's own are checked too (no skipLibCheck).
      lib: ["es2022", "dom", "esnext.disposable"],
      types: [],
      outDir: "out",
    };
    await writeFile(
      join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions, files: ["program.ts"] }),
    );
    await writeFile(
      join(project, "tsconfig.wrong.json"),
      JSON.stringify({
        compilerOptions: { ...compilerOptions, noEmit: true },
        files: ["wrong.ts"],
      }),
    );
    await writeFile(join(project, "program.ts"), PROGRAM);
    await writeFile(join(project, "wrong.ts"), WRONG);
    await run("npm", [
      "install",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      ...tarballs,
      `typescript@${TYPESCRIPT}`,
    ]);
  }, 240_000);

  afterAll(async () => {
    await platform?.close();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it("type-checks, compiles and runs a program using the client", async () => {
    await run("npx", ["tsc", "-p", "."]);
    const { stdout } = await run("node", ["out/program.js"], {
      FLOWPLANE_URL: platform.url,
      FLOWPLANE_TOKEN: platform.token,
    });
    expect(JSON.parse(stdout)).toEqual({
      admin: true,
      team: "Outside",
      members: 1,
      missing: "not_found",
    });
  });

  it("refuses a call with a wrong input type", async () => {
    const failed = await run("npx", ["tsc", "-p", "tsconfig.wrong.json"]).then(
      () => undefined,
      (error: { stdout: string }) => error.stdout,
    );
    expect(failed).toMatch(
      /wrong\.ts\(4,32\): error TS2322: Type 'number' is not assignable to type 'string'/,
    );
  });

  it("runs the packed CLI: --help, and whoami with the token from the environment", async () => {
    const help = await run("npx", ["flowplane", "--help"]);
    expect(help.stdout).toMatch(/Usage: flowplane/);
    const whoami = await run("npx", ["flowplane", "whoami"], {
      FLOWPLANE_URL: platform.url,
      FLOWPLANE_TOKEN: platform.token,
    });
    expect(whoami.stdout).toMatch(/admin/);
  });
});

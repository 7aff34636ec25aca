// docs/getting-started.md's curl walk-through, run as written (its `sh` block under "With curl")
// against a real server with real Node-RED: a team, an application, an instance, a flow deployed
// through the editor's admin API, and the flow answering.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, test } from "vitest";
import { inheritedEnv } from "./env";
import { startServer, type TestServer } from "./harness";

const run = promisify(execFile);
const GUIDE = resolve(dirname(fileURLToPath(import.meta.url)), "../../../docs/getting-started.md");

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startServer({ instances: true });
  // Where the guide's commands run: a clone's root, whose `.data` is the server's DATA_DIR.
  dir = await mkdtemp(join(tmpdir(), "flowplane-getting-started-"));
  await symlink(server.dataDir, join(dir, ".data"), "dir");
});
afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("the guide's curl commands make a team, an application and an instance whose flow answers", async () => {
  const guide = await readFile(GUIDE, "utf8");
  const section = guide.slice(guide.indexOf("## With curl"));
  const commands = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  expect(commands, "the guide's curl block").toBeDefined();
  const { stdout } = await run(
    "bash",
    ["-euo", "pipefail", "-c", commands!.replaceAll("http://127.0.0.1:3000", server.url)],
    { cwd: dir, env: inheritedEnv },
  );
  expect(stdout.trim().split("\n").at(-1)).toBe("Hello from Flowplane");
  const teams = await server.request("GET", "/api/v1/user/teams");
  expect(teams.body.teams.map((t: { name: string }) => t.name)).toEqual(["Production"]);
}, 180_000);

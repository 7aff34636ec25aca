// What a REST user's tooling does with the served document: generate types with
// openapi-typescript, write a client with openapi-fetch under strict TypeScript (no casts, no
// non-null assertions, no `any`), compile it, and run it against the real server.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { inheritedEnv } from "../support/env";
import { startServer, type TestServer } from "../support/harness";

const run = promisify(execFile);
const API_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startServer();
  // Outside the repository; its node_modules is apps/api's, so `openapi-fetch`, `tsx` and
  // `@types/node` resolve as they would in a user's project that installed them.
  dir = await mkdtemp(join(tmpdir(), "flowplane-generated-client-"));
  await symlink(join(API_DIR, "node_modules"), join(dir, "node_modules"), "dir");
  await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
});
afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A user's strict settings: every index access may be undefined, nothing implicit. */
const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noImplicitReturns: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  types: ["node"],
  skipLibCheck: true,
  noEmit: true,
};

function compile(file: string) {
  const program = ts.createProgram({ rootNames: [file], options: COMPILER_OPTIONS });
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
    const line =
      d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    return {
      file: d.file?.fileName,
      line,
      code: d.code,
      text: `${d.file?.fileName ?? ""}:${line} TS${d.code}: ${message}`,
    };
  });
  return { program, diagnostics };
}

/** Casts, non-null assertions and `any` anywhere in a source file. */
function escapeHatches(sourceFile: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isAsExpression(node) ||
      ts.isTypeAssertionExpression(node) ||
      ts.isNonNullExpression(node) ||
      ts.isSatisfiesExpression(node) ||
      node.kind === ts.SyntaxKind.AnyKeyword
    ) {
      const { line } = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile));
      found.push(`${line + 1}: ${node.getText(sourceFile)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

const CLIENT = `import createClient from "openapi-fetch";
import type { paths } from "./flowplane-api.js";

const baseUrl = process.env.FLOWPLANE_URL;
const token = process.env.FLOWPLANE_TOKEN;
const newName = process.argv[2];
if (baseUrl === undefined || token === undefined || newName === undefined) {
  throw new Error("set FLOWPLANE_URL and FLOWPLANE_TOKEN, and give the new name");
}

const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } });

const listed = await client.GET("/api/v1/user/teams");
if (listed.error) throw new Error(\`list: \${listed.error.code}: \${listed.error.error}\`);
if (!listed.data) throw new Error("list: no data");
const first = listed.data.teams[0];
if (!first) throw new Error("list: no teams");
// Required fields: plain strings and numbers, never possibly undefined.
const teamId: string = first.id;
const role: number = first.role;
const count: number = listed.data.count;
const self: string = first.links.self;

const renamed = await client.PUT("/api/v1/teams/{teamId}", {
  params: { path: { teamId } },
  body: { name: newName },
});
if (renamed.error) {
  const { code, error, requestId } = renamed.error;
  throw new Error(\`rename: \${code}: \${error} (\${requestId})\`);
}
if (!renamed.data) throw new Error("rename: no data");
const team = renamed.data;
const id: string = team.id;
const name: string = team.name;
const slug: string = team.slug;
const memberCount: number = team.memberCount;
const updatedAt: string = team.updatedAt;

console.log(
  JSON.stringify({
    listed: { count, teamId, role, self },
    renamed: { id, name, slug, memberCount, updatedAt, status: renamed.response.status },
  }),
);
`;

/** Each line that must not compile, with the error it must give. */
const NEGATIVE = `import createClient from "openapi-fetch";
import type { paths } from "./flowplane-api.js";

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:1" });

export async function misuse() {
  const listed = await client.GET("/api/v1/user/teams");
  if (!listed.data) throw new Error("no data");
  const unchecked: string = listed.data.teams[0].id; // TS2532 possibly 'undefined'
  const cursor: string = listed.data.meta.next_cursor; // TS2322 'string | undefined'
  await client.GET("/api/v1/no-such-path", {}); // TS2345 "/api/v1/no-such-path"
  await client.GET("/teams/{teamId}", { params: { path: { teamId: "x" } } }); // TS2345 "/teams/{teamId}"
  await client.POST("/api/v1/teams", { body: {} }); // TS2322 'name' is missing
  await client.POST("/api/v1/teams", { body: { name: 1 } }); // TS2322 'number' is not assignable
  await client.PUT("/api/v1/teams/{teamId}", { body: { name: "x" } }); // TS2345 'params' is missing
  await client.PUT("/api/v1/teams/{teamId}", { params: { path: { teamId: 1 } }, body: {} }); // TS2322 'number' is not assignable
  return { unchecked, cursor };
}
`;

describe("a client generated from the served document", () => {
  test("the document lists full paths and names the server's origin", async () => {
    const reply = await server.request("GET", "/api/json");
    expect(reply.status).toBe(200);
    const document = reply.body;
    expect(document.servers).toEqual([{ url: "http://127.0.0.1:3000" }]);
    const paths = Object.keys(document.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        "/api/v1/user",
        "/api/v1/user/teams",
        "/api/v1/teams",
        "/api/v1/teams/{teamId}",
        "/api/v1/user/tokens",
        "/api/v1/user/tokens/{id}",
      ]),
    );
    for (const path of paths) expect(path, path).toMatch(/^\/api\/v1\//);

    // The origin is the configured BASE_URL, not a constant and not the listening address.
    const proxied = await startServer({ baseUrl: "https://platform.example.com:8443" });
    try {
      const other = await proxied.request("GET", "/api/json");
      expect(other.status).toBe(200);
      expect(other.body.servers).toEqual([{ url: "https://platform.example.com:8443" }]);
      expect(Object.keys(other.body.paths)).toEqual(paths);
    } finally {
      await proxied.close();
    }
  });

  test("openapi-typescript + openapi-fetch: compiles strictly, lists teams and renames one", async () => {
    const created = await server.request("POST", "/api/v1/teams", {
      body: { name: "Generated Client" },
    });
    expect(created.status, created.text).toBe(200);

    // The types, generated as the README says, by its own commands (the document needs the
    // token, as every route under /api/ does), against this server.
    const readme = await readFile(join(API_DIR, "../../README.md"), "utf8");
    const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
      .map((m) => m[1]!.replace(/^ {2}/gm, ""))
      .find((commands) => commands.includes("openapi-typescript"));
    expect(block, "README: the commands that generate a client").toBeDefined();
    await run("bash", ["-euo", "pipefail", "-c", block!], {
      cwd: dir,
      // As the README's first commands set them.
      env: { ...inheritedEnv, TOKEN: server.adminToken, BASE: server.url },
      timeout: 60_000,
    });
    const schema = await readFile(join(dir, "flowplane-api.d.ts"), "utf8");
    expect(schema).toContain('"/api/v1/teams/{teamId}": {');
    expect(schema).toContain('"/api/v1/user/teams": {');
    await writeFile(join(dir, "client.ts"), CLIENT);
    await writeFile(join(dir, "negative.ts"), NEGATIVE);

    // The client compiles with no diagnostics and no escape hatches.
    const client = compile(join(dir, "client.ts"));
    expect(client.diagnostics.map((d) => d.text)).toEqual([]);
    const clientSource = client.program.getSourceFile(join(dir, "client.ts"));
    expect(clientSource).toBeDefined();
    if (clientSource) expect(escapeHatches(clientSource)).toEqual([]);

    // And the types are not vacuous: misuse fails exactly where and how it should (an optional
    // field is optional, a required one required, unknown paths and fields are refused).
    const negative = compile(join(dir, "negative.ts"));
    const negativeFile = join(dir, "negative.ts");
    const expected = NEGATIVE.split("\n").flatMap((line, index) => {
      const match = /\/\/ TS(\d+) (.+)$/.exec(line);
      return match ? [{ line: index + 1, code: Number(match[1]), says: match[2]! }] : [];
    });
    expect(expected.length).toBeGreaterThan(5);
    const report = negative.diagnostics.map((d) => d.text).join("\n");
    for (const { line, code, says } of expected) {
      const found = negative.diagnostics.filter((d) => d.file === negativeFile && d.line === line);
      expect(
        found.some((d) => d.code === code && d.text.includes(says)),
        `negative.ts:${line} should fail with TS${code} (${says}); got:\n${report}`,
      ).toBe(true);
    }
    // And nothing else fails: every other line is correct use.
    const unexpected = negative.diagnostics.filter(
      (d) => d.file !== negativeFile || !expected.some((e) => e.line === d.line),
    );
    expect(unexpected.map((d) => d.text)).toEqual([]);

    // Run it for real, with only the environment it needs.
    const newName = "Renamed by a générated client 🚀";
    const { stdout } = await run(process.execPath, ["--import", "tsx", "client.ts", newName], {
      cwd: dir,
      env: { ...inheritedEnv, FLOWPLANE_URL: server.url, FLOWPLANE_TOKEN: server.adminToken },
      timeout: 20_000,
    });
    const output = JSON.parse(stdout);
    expect(output).toEqual({
      listed: {
        count: 1,
        teamId: created.body.id,
        role: 50,
        self: `http://127.0.0.1:3000/api/v1/teams/${created.body.id}`,
      },
      renamed: {
        id: created.body.id,
        name: newName,
        slug: created.body.slug,
        memberCount: 1,
        updatedAt: expect.any(String),
        status: 200,
      },
    });
    const after = await server.request("GET", `/api/v1/teams/${created.body.id}`);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ id: created.body.id, name: newName });
  }, 90_000);
});

// Writes .generated/router.ts: the router's type as src/router.ts computes it, written out in full
// (every procedure's kind, input and output as plain types), so that the published declarations
// import nothing of the server (@flowplane/api, its database, Fastify). Run by `pnpm build` before
// tsup, whose declaration build reads it in place of src/router.ts. Fails when a type cannot be
// written out without the server's modules.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "src/router.ts");
const target = join(root, ".generated/router.ts");

const config = ts.getParsedCommandLineOfConfigFile(
  join(root, "tsconfig.json"),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
);
if (!config) throw new Error("packages/client: no tsconfig.json");
const program = ts.createProgram([source], { ...config.options, noEmit: true });
const checker = program.getTypeChecker();
const module = checker.getSymbolAtLocation(program.getSourceFile(source)!)!;
const router = checker.getExportsOfModule(module).find(({ name }) => name === "FlowplaneRouter");
if (!router) throw new Error("src/router.ts exports no FlowplaneRouter");

const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias;
const property = (type: ts.Type, name: string) => {
  const symbol = checker.getPropertyOfType(type, name);
  if (!symbol) throw new Error(`no ${name} in ${checker.typeToString(type)}`);
  return checker.getTypeOfSymbol(symbol);
};
/** The type as plain TypeScript; one that would need an import is refused. */
const written = (type: ts.Type, where: string) => {
  const text = checker.typeToString(type, undefined, flags);
  if (text.includes("import(")) throw new Error(`${where}: cannot be written out: ${text}`);
  return text;
};

const KINDS = { query: "TRPCQueryProcedure", mutation: "TRPCMutationProcedure" } as const;

/** A record of procedures as a type literal, nested records as nested literals. */
function record(type: ts.Type, path: string[], indent: string): string {
  const lines = checker.getPropertiesOfType(type).map((symbol) => {
    const here = [...path, symbol.name];
    const value = checker.getTypeOfSymbol(symbol);
    const name = /^[A-Za-z_$][\w$]*$/.test(symbol.name) ? symbol.name : JSON.stringify(symbol.name);
    if (!checker.getPropertyOfType(value, "_def")) {
      return `${indent}  ${name}: ${record(value, here, `${indent}  `)};`;
    }
    const def = property(value, "_def");
    const kind = written(property(def, "type"), here.join(".")).replace(/"/g, "");
    if (!(kind in KINDS))
      throw new Error(`${here.join(".")}: a ${kind}, which clients cannot call`);
    const types = property(def, "$types");
    const input = written(property(types, "input"), `${here.join(".")}'s input`);
    const output = written(property(types, "output"), `${here.join(".")}'s output`);
    return (
      `${indent}  ${name}: ${KINDS[kind as keyof typeof KINDS]}<{\n` +
      `${indent}    input: ${input};\n${indent}    output: ${output};\n${indent}    meta: object;\n` +
      `${indent}  }>;`
    );
  });
  return `{\n${lines.join("\n")}\n${indent}}`;
}

const def = property(checker.getDeclaredTypeOfSymbol(router), "_def");
const types = property(property(def, "_config"), "$types");
const shape = property(types, "errorShape");
const keys = checker.getPropertiesOfType(shape).map(({ name }) => name);
if (keys.join() !== "code,message,data") throw new Error(`unexpected error shape: ${keys.join()}`);
const transformer = written(property(types, "transformer"), "the transformer");

writeFileSync(
  (mkdirSync(dirname(target), { recursive: true }), target),
  `// Written by scripts/router-types.ts from src/router.ts; not edited by hand.
import type {
  TRPC_ERROR_CODE_NUMBER,
  TRPCBuiltRouter,
  TRPCMutationProcedure,
  TRPCQueryProcedure,
} from "@trpc/server";

/** The API's router with its context erased: what \`createTRPCClient\` is typed by. */
export type FlowplaneRouter = TRPCBuiltRouter<
  {
    ctx: object;
    meta: object;
    errorShape: {
      code: TRPC_ERROR_CODE_NUMBER;
      message: string;
      data: ${written(property(shape, "data"), "the error shape's data")};
    };
    transformer: ${transformer};
  },
  ${record(property(def, "record"), [], "  ")}
>;
`,
);

// The written type must be the computed one: the same inputs and outputs, procedure by procedure.
const check = join(root, ".generated/check.ts");
writeFileSync(
  check,
  `// Written by scripts/router-types.ts: the written router's inputs and outputs are the server's.
import type { AppRouter } from "@flowplane/api";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import type { FlowplaneRouter } from "./router";

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const inputs: Same<inferRouterInputs<FlowplaneRouter>, inferRouterInputs<AppRouter>> = true;
export const outputs: Same<inferRouterOutputs<FlowplaneRouter>, inferRouterOutputs<AppRouter>> =
  true;
`,
);
const checked = ts.createProgram({
  rootNames: [check],
  options: { ...config.options, noEmit: true, incremental: false },
  oldProgram: program,
});
const diagnostics = ts.getPreEmitDiagnostics(checked);
if (diagnostics.length > 0) {
  throw new Error(
    ts.formatDiagnosticsWithColorAndContext(diagnostics, {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => root,
      getNewLine: () => "\n",
    }),
  );
}
console.log(`wrote ${target}: the server's router, procedure by procedure`);

// `pnpm flowplane <command> [args]` in a clone of the repository (the root package.json's script).
// It builds the CLI when its sources, or the workspace packages it bundles, changed since the last
// build (turbo's cache makes that a no-op otherwise), then runs the built `flowplane` in this
// process: the same arguments, stdin, stdout, stderr and exit status as the installed command.
// The build prints nothing unless it fails, so that what the command prints (`--json`) stays clean.
// Plain JavaScript: it runs before anything is built.
import { Buffer } from "node:buffer";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import process from "node:process";
import { clearTimeout, setTimeout } from "node:timers";
import { fileURLToPath, pathToFileURL, URL } from "node:url";

const root = new URL("../../../", import.meta.url);
const main = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const turbo = createRequire(new URL("package.json", root)).resolve("turbo");
const build = ["run", "build", "--filter=@flowplane/cli", "--output-logs=errors-only"];

const child = spawn(process.execPath, [turbo, ...build], {
  cwd: fileURLToPath(root),
  // Not stdin: that is the command's (a prompt, or data piped in).
  stdio: ["ignore", "pipe", "pipe"],
});
const output = [];
child.stdout.on("data", (chunk) => output.push(chunk));
child.stderr.on("data", (chunk) => output.push(chunk));
// A cached build takes a fraction of a second, a real one several: say why nothing happens yet.
const notice = setTimeout(() => process.stderr.write("Building the flowplane CLI...\n"), 1000);
const [code] = await once(child, "close");
clearTimeout(notice);
if (code === 0) {
  process.argv = [process.argv[0], main, ...process.argv.slice(2)];
  await import(pathToFileURL(main).href);
} else {
  process.stderr.write(Buffer.concat(output));
  process.stderr.write(`Building the flowplane CLI failed: turbo ${build.join(" ")}\n`);
  process.exitCode = 1;
}

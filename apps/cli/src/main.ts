#!/usr/bin/env node
// The `flowplane` executable.
import { processEnv } from "./env";
import { run } from "./program";

process.exitCode = await run(process.argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: processEnv(),
});

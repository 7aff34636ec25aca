// The CLI as a library: `run` executes one command line in-process, as the tests do.
export type { Io, Writer } from "./context";
export { run } from "./program";

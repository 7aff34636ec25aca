// Examples of use, declared once beside each command and shown twice: under that command's own
// `--help`, and gathered with the others under `flowplane --help` (and a group's, e.g. `teams`).
import type { Command } from "commander";

export interface Example {
  /** What it does, shown as a comment line above it. */
  does: string;
  /** The command line after `flowplane`, starting with the command's own words. */
  run: string;
}

const declared = new WeakMap<Command, readonly Example[]>();

export function withExamples(command: Command, examples: readonly Example[]): Command {
  declared.set(command, examples);
  return command;
}

/** The examples of `command` and of every command under it, in the order the commands were added. */
export function examplesUnder(command: Command): Example[] {
  return [...(declared.get(command) ?? []), ...command.commands.flatMap(examplesUnder)];
}

/** Ends the help of `command`, and of each command under it, with the examples it covers. */
export function showExamples(command: Command): void {
  command.addHelpText("after", () => {
    const examples = examplesUnder(command);
    return examples.length === 0 ? "" : `\n${formatExamples(examples)}`;
  });
  command.commands.forEach(showExamples);
}

function formatExamples(examples: readonly Example[]): string {
  return `Examples:\n${examples.map((example) => `  # ${example.does}\n  flowplane ${example.run}`).join("\n\n")}`;
}

// What every command that asks before it deletes (or revokes) shares: without --yes it asks at the
// terminal, and without a terminal to answer it refuses at once, as a usage error (exit 2), before
// anything is sent; an answer other than yes stops it (exit 1, `not_confirmed`).
import type { Command } from "commander";
import type { Context } from "../context";
import { CliError } from "../errors";

/** Refuses the command when it must ask (no --yes) and nobody is at a terminal to answer. */
export function refuseUnanswerable(
  context: Context,
  command: Command,
  yes: boolean | undefined,
  verb: "delete" | "revoke" = "delete",
): void {
  if (yes || context.canAsk()) return;
  command.error(
    `error: ${commandLine(command)} asks before it ${verb}s, and no terminal is there to answer: ` +
      `give --yes to ${verb} without asking`,
    { exitCode: 2 },
  );
}

/** Asks `question`; anything but yes stops the command with `refused` as its message. */
export async function confirmOrStop(
  context: Context,
  question: string,
  refused: string,
): Promise<void> {
  if (!(await context.confirm(question))) throw new CliError(refused, "not_confirmed");
}

/** `devices snapshots delete`: the command's words after `flowplane`. */
function commandLine(command: Command): string {
  const words: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) words.unshift(at.name());
  return words.join(" ");
}

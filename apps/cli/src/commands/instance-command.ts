// What every command on one instance shares (`instances`, `instances env`, `snapshots`): the
// `<instance>` argument, named by id or name, and `--team` to look it up in (resolve/).
import type { Command } from "commander";
import { type Example, withExamples } from "./examples";
import { withTeam } from "./options";

/** A command on one instance: `<instance>`, and `--team` to look it up in. */
export function instanceCommand(
  group: Command,
  name: string,
  examples: readonly Example[],
): Command {
  return withTeam(
    withExamples(group.command(name), examples).argument("<instance>", "the instance's id or name"),
    {
      required: false,
      description: "the instance's team, by id, slug or name (default: look in all your teams)",
    },
  );
}

/** What every command on one instance takes. */
export interface InstanceOptions {
  team?: string;
  json?: boolean;
}

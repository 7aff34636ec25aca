// What every command on one instance shares (`instances`, `instances env`, `snapshots`): the
// `<instance>` argument, named by id or name, and `--team` to look it up in (resolve/).
import type { Command } from "commander";
import type { Example } from "./examples";
import { commandOnOne } from "./options";

/** A command on one instance: `<instance>`, and `--team` to look it up in. */
export function instanceCommand(
  group: Command,
  name: string,
  examples: readonly Example[],
): Command {
  return commandOnOne("instance", group, name, examples);
}

/** What every command on one instance takes. */
export interface InstanceOptions {
  team?: string;
  json?: boolean;
}

// What the variables' commands of an instance (instance-env.ts) and of a device or a device group
// (device-env.ts) share: `env set`'s assignments (NAME=value, or NAME alone: the value asked for,
// as a password is) and how they change a list of variables, and `env list`'s table.
import type { EnvVar } from "@flowplane/contract";
import { type Command, InvalidArgumentError } from "commander";
import type { Context } from "../context";
import { table } from "../output";

export interface Assignment {
  name: string;
  value?: string;
}

/** `NAME=value` (or `NAME` alone: the value is asked for, as a password is). */
export function assignment(value: string): Assignment {
  const equals = value.indexOf("=");
  const name = equals < 0 ? value : value.slice(0, equals);
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new InvalidArgumentError(
      "Not a variable: give NAME=value (letters, digits and '_'), or NAME alone to be asked.",
    );
  }
  return equals < 0 ? { name } : { name, value: value.slice(equals + 1) };
}

/** `env set`'s `<assignments...>` and `--hidden`. */
export function withAssignments(command: Command): Command {
  return command
    .argument(
      "<assignments...>",
      "NAME=value, or NAME alone to be asked for its value",
      (value, previous: Assignment[] = []) => [...previous, assignment(value)],
    )
    .option("--hidden", "never show the values again (the API returns them blank)");
}

/** Sets each assignment in `env` (a value not given is asked for), replacing one of its name. */
export async function assign(
  context: Context,
  env: EnvVar[],
  assignments: readonly Assignment[],
  hidden: boolean | undefined,
): Promise<void> {
  for (const { name, value } of assignments) {
    const given = value ?? (await context.readSecret(`Value of ${name}: `));
    const entry = { name, value: given, hidden: hidden ?? false };
    const at = env.findIndex((v) => v.name === name);
    if (at >= 0) env[at] = entry;
    else env.push(entry);
  }
}

/** The variables by name, a hidden one's value never shown. */
export function envTable(env: readonly EnvVar[]): string {
  return table(env, [
    { header: "NAME", value: (v) => v.name },
    { header: "VALUE", value: (v) => (v.hidden ? "(hidden)" : v.value) },
  ]);
}

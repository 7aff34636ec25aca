// Options and argument parsers more than one command shares. A bad value is a usage error (exit 2),
// caught before anything is sent.
import { type Command, InvalidArgumentError } from "commander";
import { ServerUrl } from "../config";

export function withJson(command: Command): Command {
  return command.option("--json", "print the API's JSON, for scripts");
}

export function serverUrl(value: string): string {
  const result = ServerUrl.safeParse(value);
  if (!result.success) throw new InvalidArgumentError("Not an http:// or https:// URL.");
  return result.data;
}

/** Epoch milliseconds (as FlowFuse takes them) or any date and time, sent as ISO-8601. */
export function expiry(value: string): number | string {
  if (/^\d+$/.test(value)) return Number(value);
  const time = Date.parse(value);
  if (Number.isNaN(time)) {
    throw new InvalidArgumentError("Not a time: give ISO-8601 (2027-01-31T18:00Z) or epoch ms.");
  }
  return new Date(time).toISOString();
}

export function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw new InvalidArgumentError("Not a positive whole number.");
  }
  return Number(value);
}

/** For options that may be given more than once. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

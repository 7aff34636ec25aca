// `flowplane rollouts watch` (and `create --watch`): a rollout's waves and devices, polled until it
// ends. At a terminal the table is drawn again in place; piped, only what changed is printed, a line
// at a time. Then the outcome, and exit 0 only when it succeeded.
import { FINISHED_ROLLOUT_STATES, type Rollout } from "@flowplane/contract";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "../client";
import type { Context } from "../context";
import { CliError } from "../errors";
import { json, table } from "../output";

type Device = Rollout["waves"][number]["devices"][number];

/** A state as printed: `rolled back`, `waiting approval`. */
export const words = (state: string) => state.replace(/_/g, " ");

const finished = (rollout: Rollout) =>
  (FINISHED_ROLLOUT_STATES as readonly string[]).includes(rollout.state);

/** Every wave's devices, one row each: the wave, its state, the device, its state and why. */
export function wavesTable(rollout: Rollout): string {
  const rows = rollout.waves.flatMap((wave) =>
    wave.devices.map((device) => ({ wave: wave.index + 1, waveState: wave.state, device })),
  );
  return rows.length === 0
    ? "No devices.\n"
    : table(rows, [
        { header: "WAVE", value: (r) => String(r.wave) },
        { header: "WAVE STATE", value: (r) => words(r.waveState) },
        { header: "DEVICE", value: (r) => r.device.name },
        { header: "DEVICE STATE", value: (r) => words(r.device.state) },
        { header: "REASON", value: (r) => r.device.reason ?? "" },
      ]);
}

/** The rollout's state line, with its failures and the reason it stopped. */
export function stateLine(rollout: Rollout): string {
  const reason = rollout.reason ? `: ${rollout.reason}` : "";
  return `Rollout ${rollout.id} ${words(rollout.state)} (wave ${rollout.currentWave + 1} of ${rollout.waves.length}, ${rollout.failures} failed)${reason}\n`;
}

/** What a piped watch prints of the rollout: a line per thing that can change. */
function changeLines(rollout: Rollout): Map<string, string> {
  const lines = new Map<string, string>();
  lines.set(
    "rollout",
    `rollout  ${words(rollout.state)}${rollout.reason ? `  ${rollout.reason}` : ""}`,
  );
  for (const wave of rollout.waves) {
    lines.set(`wave ${wave.index}`, `wave ${wave.index + 1}  ${words(wave.state)}`);
    wave.devices.forEach((device: Device) =>
      lines.set(
        `device ${device.id}`,
        `wave ${wave.index + 1}  ${device.name}  ${words(device.state)}${device.reason ? `  ${device.reason}` : ""}`,
      ),
    );
  }
  return lines;
}

/** Polls the rollout every `intervalMs` until it ends; prints it as it goes; fails unless it succeeded. */
export async function watchRollout(
  context: Context,
  client: Client,
  rolloutId: string,
  { intervalMs, asJson }: { intervalMs: number; asJson?: boolean },
): Promise<void> {
  const terminal = !asJson && context.printsToTerminal();
  let drawn = 0;
  let printed = new Map<string, string>();
  let rollout: Rollout;
  for (;;) {
    rollout = await client.rollouts.byId.query({ rolloutId });
    if (terminal) {
      const screen = stateLine(rollout) + wavesTable(rollout);
      // Up over what was drawn last, cleared to the end, and drawn again.
      context.print(`${drawn > 0 ? `\x1b[${drawn}A\x1b[0J` : ""}${screen}`);
      drawn = screen.split("\n").length - 1;
    } else if (!asJson) {
      const now = changeLines(rollout);
      for (const [key, line] of now) {
        if (printed.get(key) !== line) context.print(`${line}\n`);
      }
      printed = now;
    }
    if (finished(rollout)) break;
    await sleep(intervalMs);
  }
  if (asJson) context.print(json(rollout));
  else if (!terminal) context.print(stateLine(rollout));
  if (rollout.state !== "succeeded") {
    throw new CliError(
      `the rollout ${words(rollout.state)}${rollout.reason ? `: ${rollout.reason}` : ""}`,
      `rollout_${rollout.state}`,
    );
  }
}

// Passwords come from the user, never from the command line, where they would land in the shell's
// history and in every process listing. On a terminal the password is asked for with echo off
// (raw mode: nothing typed is shown, Backspace and Ctrl-U edit, Ctrl-C aborts); otherwise the first
// line of stdin is read, so that a script can pipe it in. A yes-or-no question (`confirm`) is only
// ever asked at a terminal: a script's stdin is its data, not an answer.
import { CliError } from "./errors";

/** Where a command writes: stdout or stderr (context.ts's Io). */
export interface Writer {
  write(text: string): unknown;
  /** Set on a terminal (process.stdout at one). */
  isTTY?: boolean;
}

/** stdin: a terminal (isTTY, setRawMode) or a pipe or file. */
export type Input = NodeJS.ReadableStream & {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
  readableEnded?: boolean;
  destroy?(): unknown;
};

export interface SecretOptions {
  /** On a terminal, ask again with this prompt, and refuse two different answers. */
  confirm?: string;
}

/** A password: asked for on `output` when `input` is a terminal, else stdin's first line. */
export async function readSecret(
  input: Input,
  output: Writer,
  prompt: string,
  options: SecretOptions = {},
): Promise<string> {
  if (!isTerminal(input)) {
    const line = await readLine(input);
    if (line === "") {
      throw new CliError(
        "no password on stdin: pipe it in as the first line, or run on a terminal to be asked",
        "password_required",
      );
    }
    return line;
  }
  const secret = await ask(input, output, prompt);
  if (secret === "") throw new CliError("no password given", "password_required");
  if (options.confirm !== undefined && (await ask(input, output, options.confirm)) !== secret) {
    throw new CliError("the two passwords differ", "password_mismatch");
  }
  return secret;
}

function isTerminal(input: Input): input is Input & { setRawMode(mode: boolean): unknown } {
  return input.isTTY === true && typeof input.setRawMode === "function";
}

/** Whether a person at a terminal is there to answer. */
export function canAsk(input: Input): boolean {
  return isTerminal(input);
}

/**
 * Asks `question` at the terminal, the answer echoed as typed (the terminal edits the line), and
 * is true for "y" or "yes" in any case; anything else, or no terminal at all, is a no.
 */
export async function confirm(input: Input, output: Writer, question: string): Promise<boolean> {
  if (!isTerminal(input)) return false;
  output.write(`${question} [y/N] `);
  const answer = await new Promise<string>((resolve, reject) => {
    let text = "";
    const finish = (error?: Error) => {
      input.removeListener("data", onData);
      input.removeListener("end", onEnd);
      input.removeListener("error", finish);
      input.pause();
      if (error) reject(error);
      else resolve(text.split(/\r?\n/, 1)[0]!);
    };
    const onEnd = () => finish();
    const onData = (chunk: string | Buffer) => {
      text += String(chunk);
      if (/[\r\n]/.test(text)) finish();
    };
    input.setEncoding("utf8");
    input.on("data", onData);
    input.on("end", onEnd);
    input.on("error", finish);
    input.resume();
  });
  return /^\s*y(es)?\s*$/i.test(answer);
}

async function ask(
  input: Input & { setRawMode(mode: boolean): unknown },
  output: Writer,
  prompt: string,
): Promise<string> {
  output.write(prompt);
  try {
    return await readHidden(input);
  } finally {
    // Enter is not echoed either: end the prompt's line.
    output.write("\n");
  }
}

/** Typed characters until Enter, with the terminal in raw mode (no echo) meanwhile. */
function readHidden(input: Input & { setRawMode(mode: boolean): unknown }): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed: string[] = [];
    // Keys such as the arrows arrive as escape sequences (ESC [ A): skipped, not typed.
    let sequence: "none" | "escape" | "csi" = "none";

    const finish = (error?: Error) => {
      input.removeListener("data", onData);
      input.removeListener("end", onEnd);
      input.removeListener("error", finish);
      input.setRawMode(false);
      input.pause();
      if (error) reject(error);
      else resolve(typed.join(""));
    };
    const onEnd = () => finish();
    const onData = (chunk: string | Buffer) => {
      // By code point, so that Backspace removes a whole character, emoji included.
      for (const char of String(chunk)) {
        if (sequence === "escape") {
          sequence = char === "[" || char === "O" ? "csi" : "none";
          continue;
        }
        if (sequence === "csi") {
          if (char >= "@" && char <= "~") sequence = "none";
          continue;
        }
        switch (char) {
          case "\r":
          case "\n":
          case "\u0004": // Ctrl-D
            return finish();
          case "\u0003": // Ctrl-C: raw mode turns it into a character, not SIGINT.
            return finish(new CliError("aborted", "aborted"));
          case "\u007f":
          case "\b":
            typed.pop();
            break;
          case "\u0015": // Ctrl-U
            typed = [];
            break;
          case "\u001b":
            sequence = "escape";
            break;
          default:
            if (!/\p{Cc}/u.test(char)) typed.push(char);
        }
      }
    };

    input.setRawMode(true);
    input.setEncoding("utf8");
    input.on("data", onData);
    input.on("end", onEnd);
    input.on("error", finish);
    input.resume();
  });
}

/** The first line of a pipe or file, without its line ending ("" when it is empty). */
function readLine(input: Input): Promise<string> {
  if (input.readableEnded) return Promise.resolve("");
  return new Promise((resolve, reject) => {
    let text = "";
    const finish = (error?: Error) => {
      input.removeListener("data", onData);
      input.removeListener("end", onEnd);
      input.removeListener("error", finish);
      // Nothing after the first line is read. Merely paused, a pipe that its writer keeps open
      // would keep this process from exiting.
      input.destroy?.();
      if (error) reject(error);
      else resolve(text.split(/\r?\n/, 1)[0]!);
    };
    const onEnd = () => finish();
    const onData = (chunk: string | Buffer) => {
      text += String(chunk);
      if (text.includes("\n")) finish();
    };
    input.setEncoding("utf8");
    input.on("data", onData);
    input.on("end", onEnd);
    input.on("error", finish);
    input.resume();
  });
}

// The password prompt against a fake terminal: a stream that says it is a TTY and records the raw
// mode it is put in, and keys typed into it as a terminal in raw mode delivers them.
import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { CliError } from "../src/errors";
import { readSecret } from "../src/prompt";

function fakeTerminal() {
  const modes: boolean[] = [];
  const stream = Object.assign(new PassThrough(), {
    isTTY: true,
    setRawMode(mode: boolean) {
      modes.push(mode);
      return stream;
    },
  });
  let shown = "";
  const output = { write: (text: string) => (shown += text) };
  /** Keys typed, each argument one chunk, once the prompt is waiting for them. */
  const type = (...chunks: string[]) =>
    setImmediate(() => chunks.forEach((chunk) => stream.write(chunk)));
  return { stream, output, modes, shown: () => shown, type };
}

describe("the password prompt on a terminal", () => {
  it("reads what is typed until Enter with echo off (raw mode), shows nothing of it, and restores the terminal", async () => {
    const terminal = fakeTerminal();
    terminal.type("s3cr", "et pass", "\r");

    const secret = await readSecret(terminal.stream, terminal.output, "Password: ");

    expect(secret).toBe("s3cret pass");
    expect(terminal.shown()).toBe("Password: \n");
    expect(terminal.modes).toEqual([true, false]);
    expect(terminal.stream.isPaused()).toBe(true);
  });

  it("Backspace removes the last character (a whole emoji too), Ctrl-U the whole line", async () => {
    const terminal = fakeTerminal();
    terminal.type("wrong", "\u0015", "pa🚀", "\u007f", "ss", "\b", "sword!", "\r");

    expect(await readSecret(terminal.stream, terminal.output, "> ")).toBe("password!");
  });

  it("skips the escape sequences of keys such as the arrows, and other control characters", async () => {
    const terminal = fakeTerminal();
    terminal.type("ab", "\u001b[D", "\u001b[1;5C", "\u001bOP", "\t", "cd\n");

    expect(await readSecret(terminal.stream, terminal.output, "> ")).toBe("abcd");
  });

  it("Ctrl-C aborts (raw mode makes it a character, not a signal) and restores the terminal", async () => {
    const terminal = fakeTerminal();
    terminal.type("half", "\u0003", "more\r");

    const failure = await readSecret(terminal.stream, terminal.output, "> ").catch((e) => e);

    expect(failure).toBeInstanceOf(CliError);
    expect(failure).toMatchObject({ code: "aborted" });
    expect(terminal.modes).toEqual([true, false]);
    expect(terminal.shown()).toBe("> \n");
  });

  it("refuses an empty password without sending anything", async () => {
    const terminal = fakeTerminal();
    terminal.type("\r");

    await expect(readSecret(terminal.stream, terminal.output, "> ")).rejects.toMatchObject({
      code: "password_required",
    });
  });

  it("with confirm, asks twice and refuses two different answers", async () => {
    const same = fakeTerminal();
    same.type("twice typed\r", "twice typed\r");
    const different = fakeTerminal();
    different.type("first one\r", "second one\r");

    expect(await readSecret(same.stream, same.output, "New: ", { confirm: "Again: " })).toBe(
      "twice typed",
    );
    expect(same.shown()).toBe("New: \nAgain: \n");
    await expect(
      readSecret(different.stream, different.output, "New: ", { confirm: "Again: " }),
    ).rejects.toMatchObject({ code: "password_mismatch" });
    expect(different.modes).toEqual([true, false, true, false]);
  });
});

describe("the password from stdin that is not a terminal", () => {
  it("is its first line, without the line ending, and no prompt is shown", async () => {
    let shown = "";
    const output = { write: (text: string) => (shown += text) };

    expect(await readSecret(Readable.from(["  spaced pass \r\nsecond line\n"]), output, "> ")).toBe(
      "  spaced pass ",
    );
    expect(await readSecret(Readable.from(["no newline"]), output, "> ")).toBe("no newline");
    expect(await readSecret(Readable.from(["split ", "over ", "chunks\nx"]), output, "> ")).toBe(
      "split over chunks",
    );
    expect(shown).toBe("");
  });

  it("stops reading after the first line: a pipe its writer keeps open must not keep the CLI running", async () => {
    const pipe = new PassThrough();
    pipe.write("the password\nmore to come");

    expect(await readSecret(pipe, { write: () => true }, "> ")).toBe("the password");
    expect(pipe.destroyed).toBe(true);
  });

  it("is read once even with confirm: a script gives the password once", async () => {
    const output = { write: () => true };

    expect(
      await readSecret(Readable.from(["only once\nnot a confirmation\n"]), output, "> ", {
        confirm: "Again: ",
      }),
    ).toBe("only once");
  });

  it("empty stdin is an error saying how to give the password", async () => {
    const failure = await readSecret(Readable.from([]), { write: () => true }, "> ").catch(
      (e) => e,
    );

    expect(failure).toMatchObject({ code: "password_required" });
    expect(failure.message).toContain("stdin");
  });
});

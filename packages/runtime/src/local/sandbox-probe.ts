// Whether a sandbox can be made on this machine as it would be for an instance, tried once by the
// local driver (host.ts) before it chooses how its instances are isolated.
import { type SandboxOptions, startSandboxed } from "./sandbox";

/**
 * Whether a sandbox can be made here as it would be for an instance: runs `command` inside one
 * (with `dir` read-only at /data) and returns undefined when it succeeds, else why not.
 */
export async function probeSandbox(
  options: Omit<SandboxOptions, "userDir" | "output" | "hostname"> & { dir: string },
  timeoutMs = 20_000,
): Promise<string | undefined> {
  const { child } = startSandboxed({
    ...options,
    hostname: "probe",
    userDir: { path: options.dir, writable: false },
    output: "pipe",
  });
  (child.stdio[0] as NodeJS.WritableStream | null)?.end();
  (child.stdio[3] as NodeJS.WritableStream | null)?.end();
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk));
  const result = await new Promise<{ code: number | null; error?: Error }>((resolve) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve({ code: null, error: new Error(`no answer within ${timeoutMs / 1000} s`) });
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ code: null, error });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code });
    });
  });
  if (result.error) {
    return (result.error as NodeJS.ErrnoException).code === "ENOENT"
      ? `${options.bwrap} was not found (Debian and Ubuntu: apt-get install bubblewrap)`
      : `${options.bwrap} could not run: ${result.error.message}`;
  }
  if (result.code === 0) return undefined;
  const said = output.trim().split("\n").slice(-3).join(" ").slice(0, 300);
  return `${options.bwrap} failed (exit code ${result.code})${said ? `: ${said}` : ""}`;
}

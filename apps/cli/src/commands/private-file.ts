// A file of secrets (a device's or a provisioning token's device.yml, an exported snapshot):
// created, never overwritten, readable by its owner alone.
import { writeFile } from "node:fs/promises";
import { CliError } from "../errors";

export async function writePrivate(file: string, text: string): Promise<void> {
  await writeFile(file, text, { mode: 0o600, flag: "wx" }).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(
      error.code === "EEXIST"
        ? `${file} exists: choose another file`
        : `cannot write ${file}: ${error.message}`,
      "cannot_write",
    );
  });
}

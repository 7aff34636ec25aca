// The modules an instance's flows use beyond Node-RED's own (installed from the palette, or
// carried by a snapshot): written into its user directory's package.json and installed with npm
// before its Node-RED starts, inside the instance's sandbox, so that a restart, a move or a fresh
// machine runs the same nodes. An install that fails is reported (ModuleInstallError, with npm's
// own words) and Node-RED is not started on a half-installed directory.
import { chown, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ModuleInstallError } from "../driver";

/** Node-RED's own first contents of a user directory's package.json. */
const DEFAULT_PACKAGE = {
  name: "node-red-project",
  description: "A Node-RED Project",
  version: "0.0.1",
  private: true,
};

/** Runs npm with `args` in the user directory; resolves with its exit code and what it printed. */
export type NpmRunner = (
  args: readonly string[],
) => Promise<{ code: number | null; output: string }>;

/** The arguments of the install (Node-RED's own, less what asks for a terminal). */
export const NPM_INSTALL_ARGS = [
  "install",
  "--no-audit",
  "--no-fund",
  "--no-update-notifier",
  "--omit=dev",
  "--engine-strict",
  "--no-package-lock",
];

async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
  try {
    const value = JSON.parse(await readFile(path, "utf8")) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const EXACT_VERSION = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

/**
 * Makes the user directory hold exactly `modules` (`{ name: version }`): its package.json's
 * dependencies become them and npm installs (or removes) what differs. Nothing runs when the
 * package.json already names them and each is installed (at its version, when an exact one).
 * Returns whether npm ran.
 */
export async function installModules(options: {
  userDir: string;
  modules: Record<string, string>;
  npm: NpmRunner;
  log: (message: string) => void;
  /** Who owns the user directory (the instance's own user id): package.json stays theirs. */
  owner?: { uid: number; gid: number | undefined };
}): Promise<boolean> {
  const { userDir, modules } = options;
  const wanted = JSON.stringify(Object.entries(modules).sort(([a], [b]) => a.localeCompare(b)));
  const packageFile = join(userDir, "package.json");
  const manifest = (await readJson(packageFile)) ?? { ...DEFAULT_PACKAGE };
  const installed = await Promise.all(
    Object.keys(modules).map((name) =>
      readJson(join(userDir, "node_modules", name, "package.json")),
    ),
  );
  const current = JSON.stringify(
    Object.entries((manifest.dependencies as Record<string, string> | undefined) ?? {}).sort(
      ([a], [b]) => a.localeCompare(b),
    ),
  );
  const inPlace = Object.entries(modules).every(([, version], i) => {
    const found = installed[i];
    return found !== undefined && (!EXACT_VERSION.test(version) || found.version === version);
  });
  if (current === wanted && inPlace) return false;

  const names = Object.keys(modules);
  options.log(
    names.length === 0
      ? "Removing the modules no longer used"
      : `Installing ${names.map((name) => `${name}@${modules[name]}`).join(", ")}`,
  );
  await writeFile(
    packageFile,
    `${JSON.stringify({ ...manifest, dependencies: modules }, null, 4)}\n`,
  );
  if (options.owner) {
    await chown(packageFile, options.owner.uid, options.owner.gid ?? options.owner.uid);
  }
  const { code, output } = await options.npm(NPM_INSTALL_ARGS);
  if (code !== 0) {
    const said = output
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith("npm notice"))
      .slice(-8);
    for (const line of said) options.log(`npm: ${line}`);
    throw new ModuleInstallError(
      `Could not install ${names.join(", ") || "the modules"}: ${said.find((line) => /ERR/.test(line)) ?? said.at(-1) ?? `npm exited with ${code}`}`,
      output,
    );
  }
  options.log("Modules installed");
  return true;
}

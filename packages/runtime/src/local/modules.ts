// The modules an instance's flows use beyond Node-RED's own (installed from the palette, or
// carried by a snapshot): written into its user directory's package.json and installed with npm
// before its Node-RED starts, so that a restart, a move or a fresh machine runs the same nodes.
// All of it — reading and writing package.json, looking into node_modules, npm — is done by
// node-red/modules.cjs inside the instance's sandbox as its own user: those files are the
// tenant's, and the platform (root) never opens them. An install that fails is reported
// (ModuleInstallError, with npm's own words) and Node-RED is not started on a half-installed
// directory.
import { ModuleInstallError } from "../driver";

/**
 * Runs modules.cjs with `args` (after npm's script) in the user directory; resolves with its exit
 * code and what it printed. `onOutput` sees what it prints as it comes.
 */
export type ModulesRunner = (
  args: readonly string[],
  onOutput: (text: string) => void,
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

/** What modules.cjs prints first (kept in step with it). */
const IN_PLACE = "flowplane-modules: in place";
const INSTALLING = "flowplane-modules: installing";

/**
 * Makes the user directory hold exactly `modules` (`{ name: version }`): its package.json's
 * dependencies become them and npm installs (or removes) what differs. Nothing is installed when
 * the package.json already names them and each is installed (at its version, when an exact one).
 * Returns whether npm ran.
 */
export async function installModules(options: {
  modules: Record<string, string>;
  run: ModulesRunner;
  log: (message: string) => void;
}): Promise<boolean> {
  const { modules } = options;
  const names = Object.keys(modules);
  let announced = false;
  const { code, output } = await options.run(
    [JSON.stringify(modules), ...NPM_INSTALL_ARGS],
    (text) => {
      if (announced || !text.includes(INSTALLING)) return;
      announced = true;
      options.log(
        names.length === 0
          ? "Removing the modules no longer used"
          : `Installing ${names.map((name) => `${name}@${modules[name]}`).join(", ")}`,
      );
    },
  );
  if (code === 0 && output.startsWith(IN_PLACE)) return false;
  if (code !== 0) {
    const said = output
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith("npm notice") && line !== INSTALLING)
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

/**
 * Refuses (ModuleInstallError) modules that the palette's allow-list does not name: names, where
 * `*` matches any text (Node-RED's own rule for `externalModules.palette.allowList`).
 */
export function checkAllowed(
  modules: Record<string, string>,
  allowList: readonly string[] | undefined,
): void {
  if (!allowList) return;
  const rules = allowList.map(
    (rule) => new RegExp(`^${rule.split("*").map(escapeRegExp).join(".*")}$`),
  );
  const refused = Object.keys(modules).filter((name) => !rules.some((rule) => rule.test(name)));
  if (refused.length > 0) {
    throw new ModuleInstallError(
      `Could not install ${refused.join(", ")}: ${refused.join(", ")} ${refused.length === 1 ? "is" : "are"} not on the palette's allow-list`,
      "",
    );
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

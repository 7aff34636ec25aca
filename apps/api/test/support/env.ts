// What a child server process inherits from the test's environment: only what it needs to run.
export const inheritedEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
/** In CI (.ci/run), where tests that need a browser must run rather than skip. */
export const inCI = process.env.CI === "true";
/** UPDATE_SCREENSHOTS=1: the browser tests write the README's screenshots to docs/screenshots/. */
export const updateScreenshots = process.env.UPDATE_SCREENSHOTS === "1";
/** The FlowFuse device agent's package (../shared/clients/), when it is not in the usual place. */
export const deviceAgentPackage = process.env.DEVICE_AGENT_TGZ;

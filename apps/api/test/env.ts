// What a child server process inherits from the test's environment: only what it needs to run.
export const inheritedEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
/** In CI (.ci/run), where tests that need a browser must run rather than skip. */
export const inCI = process.env.CI === "true";

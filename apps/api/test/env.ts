// What a child server process inherits from the test's environment: only what it needs to run.
export const inheritedEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };

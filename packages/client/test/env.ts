// The environment the tests read: only PATH, which the scratch project's commands (npm, node) need.
export const inheritedPath = process.env.PATH ?? "";

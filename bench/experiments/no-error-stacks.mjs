// Experiment, not server code: `pnpm bench --server-preload=experiments/no-error-stacks.mjs`
//
// Turns off stack capture for every Error the server creates (Error.stackTraceLimit = 0), to
// measure what capturing stacks costs on paths that throw per request, such as the 401 of a
// malformed token (authentication.ts throws a new ApiError, a TRPCError, for each request).
// Not a recommendation as such: unexpected errors need their stacks. See README.md, "Findings".
Error.stackTraceLimit = 0;

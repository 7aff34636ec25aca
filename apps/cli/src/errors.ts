// A failure the user is told about as `error: <message> (<code>)` and exit status 1. Codes are the
// API's (snake_case) for API failures and the CLI's own, in the same style, for local ones.
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: string,
    /** Extra lines under the message, such as the request id of a server fault. */
    readonly details: readonly string[] = [],
    /** The HTTP status, for API errors: the API answers both 401 and 403 with `unauthorized`. */
    readonly status?: number,
  ) {
    super(message);
    this.name = "CliError";
  }
}

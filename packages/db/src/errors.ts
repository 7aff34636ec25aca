/** True for a unique-constraint violation (SQLSTATE 23505), from pg or PGlite alike. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    "code" in error &&
    (error as { code: unknown }).code === "23505"
  );
}

/**
 * True for a foreign-key violation: a referenced row is gone, or still used. SQLSTATE 23503; from
 * PostgreSQL 18 on, a row still referenced through ON DELETE RESTRICT is 23001
 * (restrict_violation) instead.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null || !("code" in error)) return false;
  const code = (error as { code: unknown }).code;
  return code === "23503" || code === "23001";
}

/**
 * The database cannot be reached now: its server is down, restarting, or refusing connections.
 * The pool (create-db.ts) throws it, with the driver's error as `cause`, for every failure to
 * connect or connection lost, so that a request can answer 503 and be retried; any other error
 * (a constraint, a bad query) is thrown as the driver threw it.
 */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super("The database is unavailable", { cause });
    this.name = "DatabaseUnavailableError";
  }
}

/** The socket errors of a connection that could not be made or was lost. */
const CONNECTION_ERRNOS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/** node-postgres' own messages for a connection that timed out, ended or broke. */
const CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Query read timeout)/;

/**
 * True for a failure of the connection rather than of the statement: a socket error (a Unix
 * socket missing while the server is down is ENOENT on connect), node-postgres' own connection
 * messages, SQLSTATE class 08 (connection exception), 57P01/57P02/57P03 (administrator or crash
 * shutdown, cannot connect now: starting up or shutting down) and 53300 (too many connections).
 */
export function isConnectionFailure(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  if (error instanceof DatabaseUnavailableError) return true;
  const { code, syscall, message } = error as {
    code?: unknown;
    syscall?: unknown;
    message?: unknown;
  };
  if (typeof code === "string") {
    if (CONNECTION_ERRNOS.has(code)) return true;
    if (code === "ENOENT" && syscall === "connect") return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
    if (code === "57P01" || code === "57P02" || code === "57P03" || code === "53300") return true;
  }
  if (typeof message === "string" && CONNECTION_MESSAGES.test(message)) return true;
  // Several addresses tried (localhost's ::1 and 127.0.0.1): each refused.
  if (error instanceof AggregateError) return error.errors.some(isConnectionFailure);
  return false;
}

/** The driver's error as the pool throws it: a connection failure becomes DatabaseUnavailableError. */
export function asDatabaseError(error: unknown): unknown {
  return isConnectionFailure(error) && !(error instanceof DatabaseUnavailableError)
    ? new DatabaseUnavailableError(error)
    : error;
}

/**
 * True for a value PostgreSQL cannot take (SQLSTATE class 22, data exception): an id in a path that
 * is not of its column's type (22P02), holds a NUL byte (22021), or is too long (22001).
 */
export function isDataException(error: unknown): boolean {
  if (typeof error !== "object" || error === null || !("code" in error)) return false;
  const code = (error as { code: unknown }).code;
  return typeof code === "string" && /^22[0-9A-Z]{3}$/.test(code);
}

/**
 * A lookup by an id from a request: undefined when the id is malformed (nothing has it); any other
 * error — the database unavailable (503) — is thrown as it came.
 */
export async function unlessMalformedId<T>(lookup: Promise<T>): Promise<T | undefined> {
  try {
    return await lookup;
  } catch (error) {
    if (isDataException(error)) return undefined;
    throw error;
  }
}

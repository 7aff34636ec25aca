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

/** True for a unique-constraint violation (SQLSTATE 23505), from pg or PGlite alike. */
export function isUniqueViolation(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    "code" in error &&
    (error as { code: unknown }).code === "23505"
  );
}

// What people read: aligned columns and label/value blocks. Scripts get the API's JSON instead.

export interface Column<T> {
  header: string;
  value: (row: T) => string;
}

/** Columns padded to their widest cell, two spaces apart, a header line first. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  return align([
    columns.map((column) => column.header),
    ...rows.map((row) => columns.map((column) => column.value(row))),
  ]);
}

/** One `label  value` line per field, the values aligned. */
export function fields(pairs: readonly (readonly [label: string, value: string])[]): string {
  return align(pairs.map(([label, value]) => [label, value]));
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * Every time the CLI prints, one way: `2026-11-21 12:55:41 UTC` (UTC, to the second), or `none`
 * for a missing time. Any ISO-8601 time or epoch milliseconds; `--json` keeps the API's own.
 */
export function when(time: string | number | null, none = "never"): string {
  if (time === null) return none;
  const date = new Date(time);
  if (Number.isNaN(date.getTime())) return String(time);
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

function align(lines: readonly (readonly string[])[]): string {
  const cells = lines.map((line) => line.map(printable));
  const widths: number[] = [];
  for (const line of cells) {
    line.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, width(cell))));
  }
  return cells
    .map((line) =>
      line
        .map((cell, i) =>
          i === line.length - 1 ? cell : cell + " ".repeat(widths[i]! - width(cell)),
        )
        .join("  ")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}

/** Names come from other users: a control character in one must not drive the terminal. */
function printable(text: string): string {
  return text.replace(/\p{Cc}/gu, "?");
}

function width(text: string): number {
  return [...text].length;
}

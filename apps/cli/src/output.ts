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

/** `2026-11-21 12:55 UTC`, or `none` for a missing time. */
export function when(iso: string | null, none = "never"): string {
  if (iso === null) return none;
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
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

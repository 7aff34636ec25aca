import { describe, expect, it } from "vitest";
import { fields, table, when } from "../src/output";

describe("tables for people", () => {
  const columns = [
    { header: "ID", value: (row: { id: string; name: string }) => row.id },
    { header: "NAME", value: (row: { id: string; name: string }) => row.name },
  ];

  it("pads every column but the last to its widest cell, two spaces apart", () => {
    expect(
      table(
        [
          { id: "a", name: "Short" },
          { id: "longer-id", name: "Ünïcødé 🚀" },
        ],
        columns,
      ),
    ).toBe("ID         NAME\na          Short\nlonger-id  Ünïcødé 🚀\n");
  });

  it("prints a control character in a name as ?, so that a name cannot drive the terminal", () => {
    expect(table([{ id: "x", name: "evil\u001b[2Jname\n" }], columns)).toBe(
      "ID  NAME\nx   evil?[2Jname?\n",
    );
  });

  it("aligns label/value blocks the same way", () => {
    expect(
      fields([
        ["id", "1"],
        ["username", "admin"],
      ]),
    ).toBe("id        1\nusername  admin\n");
  });

  it("shows times to the second in UTC, and a missing time as never", () => {
    expect(when("2026-11-21T12:55:41.041Z")).toBe("2026-11-21 12:55:41 UTC");
    expect(when("2026-11-21T13:55:41+01:00")).toBe("2026-11-21 12:55:41 UTC");
    expect(when(Date.UTC(2026, 10, 21, 12, 55, 41, 999))).toBe("2026-11-21 12:55:41 UTC");
    expect(when(null)).toBe("never");
  });
});

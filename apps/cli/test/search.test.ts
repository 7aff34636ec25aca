// `flowplane search`: finds a team's applications, instances and devices by name in any case, says
// so when nothing matches, and prints the API's JSON for scripts.
import { beforeAll, describe, expect, it } from "vitest";
import { cell, type User } from "./cli";
import { serveWithAdmin } from "./server";

let admin: User;

serveWithAdmin((served) => ({ admin } = served));
beforeAll(async () => {
  const created = await admin.flowplane(
    ...["teams", "create", "Finders", "--slug", "finders", "--json"],
  );
  expect(created.status, created.stderr).toBe(0);
  const app = await admin.flowplane("apps", "create", "Packing LINE", "--team", "finders");
  expect(app.status, app.stderr).toBe(0);
});

describe("flowplane search", () => {
  it("finds by name in any case, as a table or the API's JSON", async () => {
    const found = await admin.flowplane("search", "line", "--team", "finders");
    expect(found.status, found.stderr).toBe(0);
    expect(cell(found.stdout, 1, "KIND")).toBe("application");
    expect(cell(found.stdout, 1, "NAME")).toBe("Packing LINE");

    const scripted = await admin.flowplane("search", "PACKING", "--team", "finders", "--json");
    expect(scripted.status, scripted.stderr).toBe(0);
    expect(JSON.parse(scripted.stdout)).toMatchObject({
      count: 1,
      results: [{ object: "application", name: "Packing LINE" }],
    });
  });

  it("says when nothing matches", async () => {
    const none = await admin.flowplane("search", "100%", "--team", "finders");
    expect(none.status, none.stderr).toBe(0);
    expect(none.stdout).toBe("Nothing in the team matches.\n");
  });
});

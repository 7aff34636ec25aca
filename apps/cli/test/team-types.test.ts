// `flowplane team-types` as an administrator and as an ordinary user runs it, against the real
// server: list and show for everyone; create, update and delete for administrators; a team created
// with a type, which is then kept to its limits.
import { beforeAll, describe, expect, it } from "vitest";
import { cell, newUser, ok, type User } from "./cli";
import { serveWithAdmin, type TestServer } from "./server";

let server: TestServer;
let admin: User;
let someone: User;
serveWithAdmin((served) => ({ server, admin } = served));
beforeAll(async () => {
  // An ordinary user, logged in with their password.
  const password = "correct horse battery staple\n";
  const created = await admin.flowplaneWith(password, "users", "create", "tina", "--name", "Tina");
  expect(created.status, created.stderr).toBe(0);
  someone = await newUser();
  const login = await someone.flowplaneWith(
    password,
    ...["login", "--username", "tina", "--url", server.url],
  );
  expect(login.status, login.stderr).toBe(0);
});

describe("flowplane team-types", () => {
  it("anyone lists the active types with their limits, in aligned columns", async () => {
    const list = await ok(someone, "team-types", "list");

    expect(list.split("\n")[0]).toMatch(
      /^NAME\s+ACTIVE\s+ORDER\s+MEMBERS\s+INSTANCES\s+DEVICES\s+BROKER CLIENTS\s+ID$/,
    );
    expect(cell(list, 1, "NAME")).toBe("Starter");
    expect(cell(list, 1, "MEMBERS")).toBe("no limit");
    expect(cell(list, 1, "BROKER CLIENTS")).toBe("no limit");
  });

  it("an administrator creates a type with limits and features; anyone shows it by name", async () => {
    const created = await ok(
      admin,
      ...["team-types", "create", "Small", "--users", "2", "--instances", "1"],
      ...["--description", "For trials", "--order", "5", "--feature", "sso=true"],
      ...["--feature", "tier=bronze", "--feature", "seats=3"],
    );
    expect(created).toMatch(/^Created team type Small \(id \S+\)\.\n/);

    const shown = await ok(someone, "team-types", "show", "small");
    expect(shown).toMatch(/^Members\s+2$/m);
    expect(shown).toMatch(/^Instances\s+1$/m);
    expect(shown).toMatch(/^Devices\s+no limit$/m);
    expect(shown).toMatch(/^Description\s+For trials$/m);
    expect(shown).toMatch(/^Features\s+sso=true, tier=bronze, seats=3$/m);
    const json = JSON.parse(await ok(someone, "team-types", "show", "Small", "--json"));
    expect(json).toMatchObject({
      name: "Small",
      active: true,
      order: 5,
      properties: {
        users: { limit: 2 },
        instances: { limit: 1 },
        features: { sso: true, seats: 3 },
      },
    });
    expect(JSON.parse(await ok(someone, "team-types", "show", json.id, "--json")).name).toBe(
      "Small",
    );
  });

  it("update changes only what it names, keeping the other limits and features", async () => {
    await ok(admin, "team-types", "create", "Medium", "--users", "5", "--feature", "a=1");

    await ok(
      admin,
      ...["team-types", "update", "Medium", "--users", "none", "--devices", "3"],
      ...["--feature", "b=text", "--remove-feature", "a", "--no-description", "--name", "Mid"],
    );

    const type = JSON.parse(await ok(admin, "team-types", "show", "Mid", "--json"));
    expect(type).toMatchObject({ name: "Mid", description: null });
    expect(type.properties).toMatchObject({
      users: { limit: null },
      devices: { limit: 3 },
      features: { b: "text" },
    });
    expect(type.properties.features).not.toHaveProperty("a");
  });

  it("an inactive type is listed with --filter inactive or all, not by default", async () => {
    await ok(admin, "team-types", "create", "Retired", "--inactive");

    const names = async (...filter: string[]) =>
      JSON.parse(await ok(someone, "team-types", "list", ...filter, "--json")).types.map(
        (type: { name: string }) => type.name,
      );
    expect(await names()).not.toContain("Retired");
    expect(await names("--filter", "inactive")).toEqual(["Retired"]);
    expect(await names("--filter", "all")).toContain("Retired");
    // And named by show and update all the same.
    await ok(admin, "team-types", "update", "Retired", "--active");
    expect(await names()).toContain("Retired");
  });

  it("a team created with a type is kept to its limits", async () => {
    await ok(admin, "team-types", "create", "Solo", "--users", "1");
    const team = JSON.parse(
      await ok(admin, "teams", "create", "Alone", "--type", "solo", "--slug", "alone", "--json"),
    );
    expect(team.type.name).toBe("Solo");

    const invited = await admin.flowplane("invitations", "create", "tina", "--team", "alone");
    expect(invited.status).toBe(1);
    expect(invited.stderr).toMatch(/allows 1 member.*\(member_limit_reached\)\n$/);
  });

  it("delete takes only a type no team has (the API's invalid_team_type, exit 1)", async () => {
    await ok(admin, "team-types", "create", "Spare");
    expect(await ok(admin, "team-types", "delete", "spare")).toMatch(
      /^Deleted team type Spare \(id \S+\)\.\n$/,
    );
    const gone = await admin.flowplane("team-types", "show", "Spare");
    expect(gone).toMatchObject({ status: 1 });
    expect(gone.stderr).toBe('error: no team type has the id or name "Spare" (not_found)\n');

    const used = await admin.flowplane("team-types", "delete", "Solo");
    expect(used.status).toBe(1);
    expect(used.stderr).toMatch(/in use by 1 team: .*\(invalid_team_type\)\n$/);
  });

  it("an ordinary user cannot create, change or delete a type: the hint says who can (exit 1)", async () => {
    for (const args of [
      ["create", "Mine"],
      ["update", "Starter", "--users", "1"],
      ["delete", "Small"],
    ]) {
      const refused = await someone.flowplane("team-types", ...args);

      expect(refused.status, args.join(" ")).toBe(1);
      expect(refused.stderr).toContain("(unauthorized)\n");
      expect(refused.stderr).toContain(
        "  team types are changed only with an administrator's token with admin opt-in\n",
      );
    }
    expect(
      JSON.parse(await ok(someone, "team-types", "show", "Starter", "--json")).properties,
    ).toMatchObject({ users: { limit: null } });
  });

  it("bad values are usage errors (exit 2), and nothing is sent", async () => {
    const user = await newUser();
    for (const args of [
      ["create", "X", "--users", "many"],
      ["create", "X", "--feature", "novalue"],
      ["create", "X", "--active", "--inactive"],
      ["list", "--filter", "some"],
    ]) {
      expect((await user.flowplane("team-types", ...args)).status, args.join(" ")).toBe(2);
    }
    const nothing = await admin.flowplane("team-types", "update", "Starter");
    expect(nothing.status).toBe(2);
    expect(nothing.stderr).toContain("nothing to change");
  });
});

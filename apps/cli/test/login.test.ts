import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loginFileOf, newUser, scratchDir, userWith } from "./cli";
import { deadUrl, startServer, type TestServer } from "./server";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.close();
});

describe("flowplane login", () => {
  it("stores the token and URL in flowplane/config.json (0600, directory 0700) once the server accepts it", async () => {
    const user = await newUser();
    const login = await user.flowplane("login", "--token", server.adminToken, "--url", server.url);

    expect(login).toMatchObject({ status: 0, stderr: "" });
    expect(login.stdout).toContain(`Logged in to ${server.url} as admin (Administrator).`);
    const file = loginFileOf(user);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      url: server.url,
      token: server.adminToken,
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(user.configDir!, "flowplane"))).mode & 0o777).toBe(0o700);
  });

  it("lets whoami use the stored login, and neither prints the token", async () => {
    const user = await newUser();
    const login = await user.flowplane("login", "--token", server.adminToken, "--url", server.url);
    const whoami = await user.flowplane("whoami");

    expect(whoami).toMatchObject({ status: 0, stderr: "" });
    expect(whoami.stdout).toMatch(/^username\s+admin$/m);
    expect(whoami.stdout).toMatch(/^admin\s+yes/m);
    expect(whoami.stdout).toMatch(new RegExp(`^server\\s+${server.url}$`, "m"));
    for (const output of [login.stdout, login.stderr, whoami.stdout, whoami.stderr]) {
      expect(output).not.toContain(server.adminToken);
    }
  });

  it("prints the API's user with --json", async () => {
    const user = await newUser();
    const login = await user.flowplane(
      "login",
      "--token",
      server.adminToken,
      "--url",
      server.url,
      "--json",
    );
    const whoami = await user.flowplane("whoami", "--json");

    expect(JSON.parse(login.stdout)).toMatchObject({ username: "admin", admin: true });
    expect(JSON.parse(whoami.stdout)).toEqual(JSON.parse(login.stdout));
  });

  it("refuses a token the server does not accept, naming the token given, and stores nothing", async () => {
    const user = await newUser();
    const login = await user.flowplane(
      "login",
      "--token",
      "fpat_notarealtoken0000000000000000",
      "--url",
      server.url,
    );

    expect(login).toEqual({
      status: 1,
      stdout: "",
      stderr:
        `error: ${server.url} refused the token given to --token (unauthorized)\n` +
        "  it was revoked or has expired, or its user is suspended or deleted, or it was never " +
        "issued by this server\n",
    });
    await expect(stat(loginFileOf(user))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("does not replace a working login with a refused token", async () => {
    const user = await newUser();
    await user.flowplane("login", "--token", server.adminToken, "--url", server.url);
    const refused = await user.flowplane("login", "--token", "not-a-token");

    expect(refused.status).toBe(1);
    expect((await user.flowplane("whoami")).status).toBe(0);
  });

  it("replaces a loosely readable config file with a 0600 one", async () => {
    const user = await newUser();
    await mkdir(join(user.configDir!, "flowplane"), { recursive: true, mode: 0o755 });
    await writeFile(loginFileOf(user), "{}", { mode: 0o644 });

    await user.flowplane("login", "--token", server.adminToken, "--url", server.url);

    expect((await stat(loginFileOf(user))).mode & 0o777).toBe(0o600);
    expect((await stat(join(user.configDir!, "flowplane"))).mode & 0o777).toBe(0o700);
  });

  it("keeps the login under XDG_CONFIG_HOME when it is set", async () => {
    const xdg = await scratchDir();
    const user = userWith(undefined, { XDG_CONFIG_HOME: xdg });

    expect(
      (await user.flowplane("login", "--token", server.adminToken, "--url", server.url)).status,
    ).toBe(0);
    expect(JSON.parse(await readFile(join(xdg, "flowplane", "config.json"), "utf8"))).toMatchObject(
      {
        url: server.url,
      },
    );
  });

  it("takes a URL that is not http(s) as a usage error (exit 2) and contacts nothing", async () => {
    const user = await newUser();
    const login = await user.flowplane("login", "--token", server.adminToken, "--url", "ftp://x");

    expect(login.status).toBe(2);
    expect(login.stderr).toContain("Not an http:// or https:// URL.");
    await expect(stat(loginFileOf(user))).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("FLOWPLANE_TOKEN and FLOWPLANE_URL", () => {
  it("are enough without a stored login", async () => {
    const user = await newUser({ FLOWPLANE_TOKEN: server.adminToken, FLOWPLANE_URL: server.url });
    const whoami = await user.flowplane("whoami", "--json");

    expect(whoami.status).toBe(0);
    expect(JSON.parse(whoami.stdout)).toMatchObject({ username: "admin" });
  });

  it("override the stored URL", async () => {
    const stored = await newUser();
    await mkdir(join(stored.configDir!, "flowplane"), { recursive: true });
    await writeFile(
      loginFileOf(stored),
      JSON.stringify({ url: await deadUrl(), token: server.adminToken }),
    );
    const overridden = userWith(stored.configDir, { FLOWPLANE_URL: server.url });

    expect((await stored.flowplane("whoami")).stderr).toContain("(unreachable)");
    expect((await overridden.flowplane("whoami")).status).toBe(0);
  });

  it("override the stored token", async () => {
    const stored = await newUser();
    await stored.flowplane("login", "--token", server.adminToken, "--url", server.url);
    const overridden = userWith(stored.configDir, {
      FLOWPLANE_TOKEN: "fpat_revokedorneverissued0000000",
    });

    expect((await stored.flowplane("whoami")).status).toBe(0);
    const refused = await overridden.flowplane("whoami");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: \S+ refused the token in FLOWPLANE_TOKEN \(unauthorized\)\n/,
    );
  });
});

describe("failures before the API answers", () => {
  it("without a login or FLOWPLANE_TOKEN, a command exits 1 with not_logged_in", async () => {
    const whoami = await (await newUser()).flowplane("whoami");

    expect(whoami.status).toBe(1);
    expect(whoami.stderr).toMatch(/^error: not logged in: .*\(not_logged_in\)\n$/);
  });

  it("a server that cannot be reached is an error naming its URL (exit 1)", async () => {
    const url = await deadUrl();
    const user = await newUser({ FLOWPLANE_TOKEN: server.adminToken, FLOWPLANE_URL: url });
    const whoami = await user.flowplane("whoami");

    expect(whoami.status).toBe(1);
    expect(whoami.stderr).toMatch(
      new RegExp(`^error: cannot reach ${url}: .*\\(unreachable\\)\\n$`),
    );
    expect(whoami.stderr).not.toContain(server.adminToken);
  });
});

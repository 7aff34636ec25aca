import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loginFileOf, newUser, scratchDir, terminal, userWith } from "./cli";
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
    const file = join(await scratchDir(), "token");
    await writeFile(file, `${server.adminToken}\n`);
    const login = await user.flowplane("login", "--token-file", file, "--url", server.url);

    expect(login).toMatchObject({ status: 0, stderr: "" });
    expect(login.stdout).toContain(`Logged in to ${server.url} as admin (Administrator).`);
    const stored = loginFileOf(user);
    expect(JSON.parse(await readFile(stored, "utf8"))).toEqual({
      url: server.url,
      token: server.adminToken,
    });
    expect((await stat(stored)).mode & 0o777).toBe(0o600);
    expect((await stat(join(user.configDir!, "flowplane"))).mode & 0o777).toBe(0o700);
  });

  it("reads the token from stdin with --token-stdin: piped in, or typed at a terminal", async () => {
    const piped = await newUser();
    const login = await piped.flowplaneWith(
      `${server.adminToken}\n`,
      ...["login", "--token-stdin", "--url", server.url],
    );
    expect(login).toMatchObject({ status: 0, stderr: "" });
    expect(JSON.parse(await readFile(loginFileOf(piped), "utf8")).token).toBe(server.adminToken);

    const typed = await newUser();
    const asked = await typed.flowplaneWith(
      terminal(server.adminToken),
      "login",
      "--token-stdin",
      "--url",
      server.url,
    );
    expect(asked.status).toBe(0);
    expect(asked.stderr).toBe(`Token for ${server.url}: \n`);
    expect(asked.stdout + asked.stderr).not.toContain(server.adminToken);
  });

  it("refuses --token-stdin with nothing on stdin, and an unreadable --token-file, storing nothing", async () => {
    const user = await newUser();
    expect(await user.flowplane("login", "--token-stdin", "--url", server.url)).toEqual({
      status: 1,
      stdout: "",
      stderr:
        "error: no token on stdin: pipe it in as the first line, run on a terminal to be asked, " +
        "or use --token-file <path> (token_required)\n",
    });
    const missing = join(await scratchDir(), "nothing-here");
    const unreadable = await user.flowplane("login", "--token-file", missing, "--url", server.url);
    expect(unreadable.status).toBe(1);
    expect(unreadable.stderr).toMatch(
      new RegExp(
        `^error: cannot read the token file ${missing}: .*ENOENT.*\\(token_file_unreadable\\)\\n$`,
      ),
    );
    await expect(stat(loginFileOf(user))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("still takes --token, with a warning that names the safer ways and not the token", async () => {
    const user = await newUser();
    const login = await user.flowplane("login", "--token", server.adminToken, "--url", server.url);
    expect(login.status).toBe(0);
    expect(login.stderr).toBe(
      "warning: --token puts the token on the command line, where process listings, shell " +
        "history and CI logs show it: use --token-file <path> or --token-stdin\n",
    );
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
      ...["login", "--token", server.adminToken, "--url", server.url, "--json"],
    );
    const whoami = await user.flowplane("whoami", "--json");

    expect(JSON.parse(login.stdout)).toMatchObject({ username: "admin", admin: true });
    expect(JSON.parse(whoami.stdout)).toEqual(JSON.parse(login.stdout));
  });

  it("refuses a token the server does not accept, naming the token given, and stores nothing", async () => {
    const user = await newUser();
    const login = await user.flowplaneWith(
      "fpat_notarealtoken0000000000000000\n",
      ...["login", "--token-stdin", "--url", server.url],
    );

    expect(login).toEqual({
      status: 1,
      stdout: "",
      stderr:
        `error: ${server.url} refused the token given to --token-stdin (unauthorized)\n` +
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

describe("a URL where something other than Flowplane answers", () => {
  /** A loopback HTTP server that answers 200 to everything, and keeps what it was sent. */
  async function impostor(healthz: string) {
    const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
    const fake = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += String(chunk)));
      request.on("end", () => {
        seen.push({ url: request.url ?? "", headers: request.headers, body });
        response.writeHead(200, { "content-type": "application/json" });
        response.end(request.url === "/healthz" ? healthz : '{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    return { url, seen, close: () => new Promise((resolve) => fake.close(resolve)) };
  }

  it("gets no token and no password: login refuses it by its /healthz, and stores nothing", async () => {
    for (const healthz of ["", '{"status":"ok"}', '{"platform":"other"}']) {
      const fake = await impostor(healthz);
      try {
        const user = await newUser();
        const file = join(await scratchDir(), "token");
        await writeFile(file, server.adminToken);
        const attempts = [
          await user.flowplane("login", "--token-file", file, "--url", fake.url),
          await user.flowplaneWith(
            `${server.adminToken}\n`,
            ...["login", "--token-stdin", "--url", fake.url],
          ),
          await user.flowplane("login", "--token", server.adminToken, "--url", fake.url),
          await user.flowplaneWith(
            "a password\n",
            ...["login", "--username", "admin", "--url", fake.url],
          ),
        ];
        for (const attempt of attempts) {
          expect(attempt.status).toBe(1);
          expect(attempt.stderr).toContain(
            `error: ${fake.url} is not a Flowplane server (GET ${fake.url}/healthz answered HTTP 200`,
          );
          expect(attempt.stderr).toContain("(not_flowplane)\n  nothing was sent to it");
          expect(attempt.stderr).not.toContain(server.adminToken);
        }
        expect(fake.seen.map((request) => request.url)).toEqual(attempts.map(() => "/healthz"));
        for (const request of fake.seen) {
          expect(request.headers.authorization).toBeUndefined();
          expect(request.headers.cookie).toBeUndefined();
          expect(request.body).toBe("");
        }
        await expect(stat(loginFileOf(user))).rejects.toMatchObject({ code: "ENOENT" });
      } finally {
        await fake.close();
      }
    }
  });

  it("gets no token from FLOWPLANE_TOKEN either: a command asks /healthz first, with no credential", async () => {
    const fake = await impostor('{"status":"ok"}');
    try {
      const user = await newUser({ FLOWPLANE_TOKEN: server.adminToken, FLOWPLANE_URL: fake.url });
      const whoami = await user.flowplane("whoami");
      expect(whoami.status).toBe(1);
      expect(whoami.stderr).toContain(`error: ${fake.url} is not a Flowplane server`);
      expect(whoami.stderr).toContain("give the platform's URL with FLOWPLANE_URL");
      expect(fake.seen.map((request) => request.url)).toEqual(["/healthz"]);
      expect(fake.seen[0]!.headers.authorization).toBeUndefined();
    } finally {
      await fake.close();
    }
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

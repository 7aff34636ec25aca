import { describe, expect, it } from "vitest";
import packageJson from "../package.json" with { type: "json" };
import { newUser } from "./cli";

describe("the flowplane command line", () => {
  it("--help lists the commands on stdout and exits 0", async () => {
    const help = await (await newUser()).flowplane("--help");

    expect(help.status).toBe(0);
    for (const command of ["login", "whoami", "teams", "tokens"]) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
    }
  });

  it("--version prints the package's version", async () => {
    expect(await (await newUser()).flowplane("--version")).toEqual({
      status: 0,
      stdout: `${packageJson.version}\n`,
      stderr: "",
    });
  });

  it("every command takes --json", async () => {
    const user = await newUser();
    for (const command of [
      ["login"],
      ["whoami"],
      ["teams", "list"],
      ["teams", "create"],
      ["teams", "rename"],
      ["tokens", "list"],
      ["tokens", "create"],
      ["tokens", "revoke"],
    ]) {
      expect((await user.flowplane(...command, "--help")).stdout).toContain("--json");
    }
  });

  it("an unknown command, an unknown option or no command at all is a usage error (exit 2)", async () => {
    const user = await newUser();
    const unknown = await user.flowplane("teams", "delete", "x");
    const option = await user.flowplane("whoami", "--verbose");
    const nothing = await user.flowplane();

    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("error: unknown command 'delete'");
    expect(option.status).toBe(2);
    expect(option.stderr).toContain("error: unknown option '--verbose'");
    expect(nothing.status).toBe(2);
    expect(nothing.stderr).toContain("Usage: flowplane");
  });

  it("a FLOWPLANE_URL that is not a URL is reported without echoing it (exit 1), and --help still works", async () => {
    const user = await newUser({ FLOWPLANE_URL: "token-like-secret", FLOWPLANE_TOKEN: "t" });
    const whoami = await user.flowplane("whoami");

    expect(whoami.status).toBe(1);
    expect(whoami.stderr).toMatch(/^error: FLOWPLANE_URL: .*\(invalid_config\)\n$/);
    expect(whoami.stderr).not.toContain("token-like-secret");
    expect((await user.flowplane("whoami", "--help")).status).toBe(0);
  });
});

// `flowplane whoami`: the owner of the token in use, and the server it was checked with.
import type { Command } from "commander";
import type { Context } from "../../context";
import { fields, json, when } from "../../output";
import { withExamples } from "../examples";
import { withJson } from "../options";

export function addWhoamiCommand(program: Command, context: Context): void {
  withJson(
    withExamples(program.command("whoami"), [
      { does: "Show whose token is in use, and on which server", run: "whoami" },
    ]).description("Show the user the token in use belongs to"),
  ).action(async (options: { json?: boolean }) => {
    const { client, url } = await context.connect();
    const user = await client.user.me.query();
    context.print(
      options.json
        ? json(user)
        : fields([
            ["username", user.username],
            ["name", user.name],
            ["email", user.email ?? "-"],
            ["admin", user.admin ? "yes (platform administrator)" : "no"],
            ["id", user.id],
            ["since", when(user.createdAt)],
            ["server", url],
          ]),
    );
  });
}

// `flowplane logout`: forgets the stored login, first revoking its token on the server when
// `login --username` created it. A token given to `login --token` is the user's own: only forgotten.
import type { Command } from "commander";
import { apiFailure, createClient } from "../../client";
import { type Login, readLogin, removeLogin } from "../../config";
import type { Context } from "../../context";
import { CliError } from "../../errors";
import { withExamples } from "../examples";

/**
 * Revokes the token `login --username` created for `login`, with that token itself. A token the
 * server no longer accepts (401: revoked, expired, or its user suspended or deleted) or no longer
 * has (404) counts as revoked; any other failure is thrown.
 */
export async function revokeIssuedToken(
  login: Login & { tokenId: string },
  file: string,
): Promise<void> {
  try {
    await createClient(login, {
      kind: "login",
      file,
      expiresAt: login.expiresAt,
    }).token.delete.mutate({
      id: login.tokenId,
    });
  } catch (error) {
    const failure = apiFailure(error);
    if (failure instanceof CliError && (failure.status === 401 || failure.status === 404)) return;
    throw failure;
  }
}

export function addLogoutCommand(program: Command, context: Context): void {
  withExamples(program.command("logout"), [
    { does: "Revoke the CLI's token (if login created it) and forget the login", run: "logout" },
  ])
    .summary("Forget the stored login, revoking the token `login --username` created")
    .description(
      "Forget the stored login. A token that `login --username` created is revoked on the " +
        "server first, with the tokens created with it (`tokens create --no-sign-in`; the " +
        "tokens `tokens create` makes by default are yours, and keep working). A token given " +
        "to `login --token` is " +
        "yours: it is only forgotten here, and keeps working until you revoke it " +
        "(`flowplane tokens revoke <id>`).\n\n" +
        "If the server cannot be reached or refuses the revocation, the login is forgotten here " +
        "all the same, and logout exits 1 naming the token to revoke later.",
    )
    .action(async () => {
      const path = context.loginFile();
      let stored: Login | undefined;
      try {
        stored = await readLogin(path);
      } catch (error) {
        // A file that is not a login holds nothing to revoke; it goes all the same.
        if (!(error instanceof CliError) || error.code !== "invalid_config") throw error;
        await removeLogin(path);
        context.print(`Removed ${path}, which held no readable login.\n`);
        return warnIfOverridden(context);
      }
      if (!stored) {
        context.print(`Not logged in: no login is stored in ${path}.\n`);
        return warnIfOverridden(context);
      }

      const { tokenId } = stored;
      let failure: unknown;
      if (tokenId !== undefined) {
        failure = await revokeIssuedToken({ ...stored, tokenId }, path).then(
          () => undefined,
          (error: unknown) => error,
        );
      }
      await removeLogin(path);

      if (tokenId === undefined) {
        context.print(
          `Logged out of ${stored.url}: forgot the login stored in ${path}.\n` +
            "Its token was given to `flowplane login --token`, so it was not revoked: it keeps " +
            "working until you revoke it (`flowplane tokens revoke <id>`).\n",
        );
      } else if (failure === undefined) {
        context.print(
          `Logged out of ${stored.url}: revoked the CLI's token (id ${tokenId}) and forgot the ` +
            `login stored in ${path}.\n`,
        );
      }
      warnIfOverridden(context);
      if (failure !== undefined) {
        const { message, code } =
          failure instanceof CliError
            ? failure
            : {
                message: failure instanceof Error ? failure.message : String(failure),
                code: "unexpected_error",
              };
        throw new CliError(message, code, [
          `the login stored in ${path} is forgotten, but its token (id ${tokenId}) was not revoked`,
          `on ${stored.url}: it works until it expires, or until \`flowplane tokens revoke ${tokenId}\``,
        ]);
      }
    });
}

function warnIfOverridden(context: Context): void {
  if (context.env().FLOWPLANE_TOKEN) {
    context.warn("FLOWPLANE_TOKEN is set; commands keep using it while it is");
  }
}

// `flowplane invitations`: a team's pending invitations (owners) or your own, inviting people by
// username or email, sending an invitation again or revoking it (owners), and accepting or
// rejecting an invitation sent to you. A team's invitation is named by its id or by its invitee's
// username or email; one sent to you by its id or, with --team, by the team that sent it.
import { type Invitation, roleName } from "@flowplane/contract";
import type { Command } from "commander";
import type { Context } from "../../context";
import { CliError } from "../../errors";
import { type Column, json, table, when } from "../../output";
import { teamRole } from "./members";
import { teamCommand } from "../options";
import { invitee, resolveMyInvitation, resolveTeam, resolveTeamInvitation } from "../../resolve";

const role = (invitation: Invitation) => roleName(invitation.role) ?? String(invitation.role);

const TEAM_COLUMNS: Column<Invitation>[] = [
  { header: "ID", value: (invitation) => invitation.id },
  { header: "INVITEE", value: invitee },
  { header: "ROLE", value: role },
  { header: "SENT", value: (invitation) => when(invitation.sentAt) },
  { header: "EXPIRES", value: (invitation) => when(invitation.expiresAt) },
];

const MY_COLUMNS: Column<Invitation>[] = [
  { header: "ID", value: (invitation) => invitation.id },
  { header: "TEAM", value: (invitation) => invitation.team.name },
  { header: "ROLE", value: role },
  { header: "FROM", value: (invitation) => invitation.invitor?.username ?? "-" },
  { header: "EXPIRES", value: (invitation) => when(invitation.expiresAt) },
];

export function addInvitationsCommands(program: Command, context: Context): void {
  const invitations = program
    .command("invitations")
    .description("Invite people to a team; accept or reject invitations sent to you");

  teamCommand(
    invitations,
    "list",
    [
      { does: "List the invitations sent to you", run: "invitations list" },
      {
        does: "List a team's pending invitations (owners)",
        run: "invitations list --team night",
      },
    ],
    (command) => command.description("Your pending invitations, or with --team a team's (owners)"),
    {
      required: false,
      description: "a team's invitations (owners), by the team's id, slug or name",
    },
  ).action(async (options: { team?: string; json?: boolean }) => {
    const { client } = await context.connect();
    const list =
      options.team === undefined
        ? await client.invitation.mine.query()
        : await client.invitation.list.query({
            teamId: (await resolveTeam(client, options.team)).id,
          });
    if (options.json) return context.print(json(list));
    if (list.invitations.length === 0) return context.print("No pending invitations.\n");
    context.print(table(list.invitations, options.team === undefined ? MY_COLUMNS : TEAM_COLUMNS));
  });

  teamCommand(
    invitations,
    "create",
    [
      {
        does: "Invite two people as members, by username and by email",
        run: "invitations create alice bob@example.com --team night",
      },
      {
        does: "Invite someone as a viewer",
        run: "invitations create carol --role viewer --team night",
      },
    ],
    (command) =>
      command
        .description("Invite up to 5 people to a team by username or email (owners)")
        .argument("<users...>", "usernames or emails")
        .option("--role <role>", "dashboard, viewer, member (default) or owner", teamRole),
  ).action(async (users: string[], options: { team: string; role?: number; json?: boolean }) => {
    const { client } = await context.connect();
    const result = await client.invitation.create.mutate({
      teamId: (await resolveTeam(client, options.team)).id,
      user: users.join(","),
      role: options.role,
    });
    if ("status" in result) {
      return context.print(options.json ? json(result) : `Invited ${users.join(", ")}.\n`);
    }
    // Some were invited, some not: say which, and fail (exit 1) so that scripts notice.
    const failed = Object.keys(result.error).map((name) => name.toLowerCase());
    const invited = users
      .flatMap((u) => u.split(","))
      .map((u) => u.trim())
      .filter((u) => u && !failed.includes(u.toLowerCase()));
    context.print(options.json ? json(result) : `Invited ${invited.join(", ")}.\n`);
    throw new CliError(
      "some were not invited",
      result.code,
      Object.entries(result.error).map(([name, reason]) => `${name}: ${reason}`),
    );
  });

  // `resend` and `revoke`: on one of the team's pending invitations, by its id or its invitee.
  for (const [verb, example, description] of [
    [
      "resend",
      {
        does: "Send an invitation again: it expires 7 days from now",
        run: "invitations resend alice --team night",
      },
      "Send a pending invitation again; it expires 7 days from now (owners)",
    ],
    [
      "revoke",
      {
        does: "Revoke an invitation: it can no longer be accepted",
        run: "invitations revoke bob@example.com --team night",
      },
      "Revoke a pending invitation (owners)",
    ],
  ] as const) {
    teamCommand(invitations, verb, [example], (command) =>
      command
        .description(description)
        .argument(
          "<invitation>",
          "the invitation's id, or its invitee's username (or email, for one sent to an email)",
        ),
    ).action(async (invitation: string, options: { team: string; json?: boolean }) => {
      const { client } = await context.connect();
      const teamId = (await resolveTeam(client, options.team)).id;
      const found = await resolveTeamInvitation(client, teamId, invitation);
      const input = { teamId, invitationId: found.id };
      if (verb === "revoke") {
        const result = await client.invitation.revoke.mutate(input);
        return context.print(
          options.json
            ? json(result)
            : `Revoked the invitation to ${invitee(found)} (id ${found.id}).\n`,
        );
      }
      const sent = await client.invitation.resend.mutate(input);
      context.print(
        options.json
          ? json(sent)
          : `Sent the invitation to ${invitee(sent)} again (id ${sent.id}); ` +
              `it expires on ${when(sent.expiresAt)}.\n`,
      );
    });
  }

  for (const answer of ["accept", "reject"] as const) {
    const accept = answer === "accept";
    teamCommand(
      invitations,
      answer,
      [
        accept
          ? {
              does: "Accept an invitation: you join its team",
              run: "invitations accept <invitationId>",
            }
          : { does: "Reject an invitation", run: "invitations reject <invitationId>" },
        {
          does: `${accept ? "Accept" : "Reject"} the invitation a team sent you, by the team's slug`,
          run: `invitations ${answer} --team night`,
        },
      ],
      (command) =>
        command
          .description(
            accept
              ? "Accept an invitation sent to you: you join the team with its role"
              : "Reject an invitation sent to you",
          )
          .argument("[invitation]", "the invitation's id, or the name of the team that sent it"),
      { required: false, description: "the team that sent it, by id, slug or name" },
    ).action(
      async (
        invitation: string | undefined,
        options: { team?: string; json?: boolean },
        command: Command,
      ) => {
        if (invitation === undefined && options.team === undefined) {
          command.error("error: name the invitation: its id, or --team <team> that sent it", {
            exitCode: 2,
          });
        }
        const { client } = await context.connect();
        const found = await resolveMyInvitation(client, invitation, options.team);
        const result = await client.invitation[answer].mutate({ invitationId: found.id });
        context.print(
          options.json
            ? json(result)
            : `${accept ? "Accepted" : "Rejected"} the invitation from team ${found.team.name} ` +
                `(id ${found.id}).\n`,
        );
      },
    );
  }
}

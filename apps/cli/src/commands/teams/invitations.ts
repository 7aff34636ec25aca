// `flowplane invitations`: a team's pending invitations (owners) or your own, inviting people by
// username or email, and accepting or rejecting an invitation sent to you.
import { type Invitation, roleName } from "@flowplane/contract";
import type { Command } from "commander";
import type { Context } from "../../context";
import { CliError } from "../../errors";
import { type Column, json, table, when } from "../../output";
import { withExamples } from "../examples";
import { teamIdOf, teamRole, withTeam } from "./members";
import { withJson } from "../options";

const role = (invitation: Invitation) => roleName(invitation.role) ?? String(invitation.role);

const invitee = (invitation: Invitation) =>
  "external" in invitation.invitee ? invitation.invitee.email : invitation.invitee.username;

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

  withJson(
    withExamples(invitations.command("list"), [
      { does: "List the invitations sent to you", run: "invitations list" },
      { does: "List a team's pending invitations (owners)", run: "invitations list --team night" },
    ])
      .description("Your pending invitations, or with --team a team's (owners)")
      .option("--team <team>", "the team's id or slug"),
  ).action(async (options: { team?: string; json?: boolean }) => {
    const { client } = await context.connect();
    const list =
      options.team === undefined
        ? await client.invitation.mine.query()
        : await client.invitation.list.query({ teamId: await teamIdOf(client, options.team) });
    if (options.json) return context.print(json(list));
    if (list.invitations.length === 0) return context.print("No pending invitations.\n");
    context.print(table(list.invitations, options.team === undefined ? MY_COLUMNS : TEAM_COLUMNS));
  });

  withJson(
    withTeam(
      withExamples(invitations.command("create"), [
        {
          does: "Invite two people as members, by username and by email",
          run: "invitations create alice bob@example.com --team night",
        },
        {
          does: "Invite someone as a viewer",
          run: "invitations create carol --role viewer --team night",
        },
      ])
        .description("Invite up to 5 people to a team by username or email (owners)")
        .argument("<users...>", "usernames or emails")
        .option("--role <role>", "dashboard, viewer, member (default) or owner", teamRole),
    ),
  ).action(async (users: string[], options: { team: string; role?: number; json?: boolean }) => {
    const { client } = await context.connect();
    const result = await client.invitation.create.mutate({
      teamId: await teamIdOf(client, options.team),
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

  withJson(
    withExamples(invitations.command("accept"), [
      { does: "Accept an invitation: you join its team", run: "invitations accept <invitationId>" },
    ])
      .description("Accept an invitation sent to you: you join the team with its role")
      .argument("<invitationId>", "the invitation's id (see `invitations list`)"),
  ).action(async (invitationId: string, options: { json?: boolean }) => {
    const { client } = await context.connect();
    const result = await client.invitation.accept.mutate({ invitationId });
    context.print(options.json ? json(result) : `Accepted invitation ${invitationId}.\n`);
  });

  withJson(
    withExamples(invitations.command("reject"), [
      { does: "Reject an invitation", run: "invitations reject <invitationId>" },
    ])
      .description("Reject an invitation sent to you")
      .argument("<invitationId>", "the invitation's id (see `invitations list`)"),
  ).action(async (invitationId: string, options: { json?: boolean }) => {
    const { client } = await context.connect();
    const result = await client.invitation.reject.mutate({ invitationId });
    context.print(options.json ? json(result) : `Rejected invitation ${invitationId}.\n`);
  });
}

// `flowplane members`: who is in a team, changing a member's role, and removing a member (or
// leaving). The team is named by id, slug or name; a member by id or username (resolve/).
import { Role, roleName, type TeamMember } from "@flowplane/contract";
import { type Command, InvalidArgumentError } from "commander";
import type { Context } from "../../context";
import { type Column, json, table } from "../../output";
import { teamCommand } from "../options";
import { resolveMember, resolveTeam } from "../../resolve";

const MEMBER_COLUMNS: Column<TeamMember>[] = [
  { header: "ID", value: (member) => member.id },
  { header: "USERNAME", value: (member) => member.username },
  { header: "NAME", value: (member) => member.name },
  { header: "ROLE", value: (member) => roleName(member.role) ?? String(member.role) },
];

const ROLE_NAMES = ["dashboard", "viewer", "member", "owner"] as const;

/** A team role by name (`owner`) or number (`50`); anything else is a usage error. */
export function teamRole(value: string): number {
  const byName = (ROLE_NAMES as readonly string[]).includes(value.toLowerCase())
    ? Role[value.toLowerCase() as (typeof ROLE_NAMES)[number]]
    : undefined;
  const level = byName ?? (/^\d+$/.test(value) ? Number(value) : NaN);
  if (![5, 10, 30, 50].includes(level)) {
    throw new InvalidArgumentError(
      "Not a team role: dashboard, viewer, member or owner (5, 10, 30, 50).",
    );
  }
  return level;
}

export function addMembersCommands(program: Command, context: Context): void {
  const members = program
    .command("members")
    .description("List a team's members, change their roles, remove them");

  teamCommand(
    members,
    "list",
    [{ does: "List a team's members with their roles", run: "members list --team night" }],
    (command) => command.description("A team's members and their roles (viewers and up)"),
  ).action(async (options: { team: string; json?: boolean }) => {
    const { client } = await context.connect();
    const list = await client.member.list.query({
      teamId: (await resolveTeam(client, options.team)).id,
    });
    if (options.json) context.print(json(list));
    else context.print(table(list.members, MEMBER_COLUMNS));
  });

  teamCommand(
    members,
    "set-role",
    [
      {
        does: "Make a member an owner of the team",
        run: "members set-role alice owner --team night",
      },
      {
        does: "Make a member a viewer, by user id",
        run: "members set-role <userId> 10 --team <teamId>",
      },
    ],
    (command) =>
      command
        .description("Change a member's role (owners)")
        .argument("<user>", "the member's username or id")
        .argument("<role>", "dashboard, viewer, member or owner (or 5, 10, 30, 50)", teamRole),
  ).action(async (user: string, role: number, options: { team: string; json?: boolean }) => {
    const { client } = await context.connect();
    const team = await resolveTeam(client, options.team);
    const member = await resolveMember(client, team, user);
    const result = await client.member.setRole.mutate({ teamId: team.id, userId: member.id, role });
    context.print(
      options.json
        ? json(result)
        : `${member.name} is now ${roleName(role)} of team ${team.name}.\n`,
    );
  });

  teamCommand(
    members,
    "remove",
    [
      { does: "Remove a member from a team", run: "members remove bob --team night" },
      { does: "Leave a team yourself", run: "members remove <yourUsername> --team night" },
    ],
    (command) =>
      command
        .description("Remove a member (owners), or leave the team (your own username)")
        .argument("<user>", "the member's username or id"),
  ).action(async (user: string, options: { team: string; json?: boolean }) => {
    const { client } = await context.connect();
    const team = await resolveTeam(client, options.team);
    const member = await resolveMember(client, team, user);
    const result = await client.member.remove.mutate({ teamId: team.id, userId: member.id });
    context.print(options.json ? json(result) : `Removed ${member.name} from team ${team.name}.\n`);
  });
}

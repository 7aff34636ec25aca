// `flowplane members`: who is in a team, changing a member's role, and removing a member (or
// leaving). The team is named by id or slug; a member by id or username.
import { Role, roleName, type TeamMember } from "@flowplane/contract";
import { type Command, InvalidArgumentError } from "commander";
import type { Client } from "../../client";
import type { Context } from "../../context";
import { type Column, json, table } from "../../output";
import { withExamples } from "../examples";
import { withJson, withTeam } from "../options";

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

/**
 * The id of the team named by id or slug among the caller's teams; anything else is passed on as
 * an id (an administrator's team they are not in), and the API answers for it.
 */
export async function teamIdOf(client: Client, team: string): Promise<string> {
  const mine = await client.user.teams.query();
  return (
    (mine.teams.find((t) => t.id === team) ?? mine.teams.find((t) => t.slug === team))?.id ?? team
  );
}

/**
 * The id of the member named by id or username; anything else is passed on as an id. Yourself
 * without listing the members, which a dashboard user may not do but may still leave.
 */
async function memberIdOf(client: Client, teamId: string, user: string): Promise<string> {
  const me = await client.user.me.query();
  if (user === me.id || user.toLowerCase() === me.username) return me.id;
  const { members } = await client.member.list.query({ teamId });
  return (
    (members.find((m) => m.id === user) ?? members.find((m) => m.username === user.toLowerCase()))
      ?.id ?? user
  );
}

export function addMembersCommands(program: Command, context: Context): void {
  const members = program
    .command("members")
    .description("List a team's members, change their roles, remove them");

  withJson(
    withTeam(
      withExamples(members.command("list"), [
        { does: "List a team's members with their roles", run: "members list --team night" },
      ]).description("A team's members and their roles (viewers and up)"),
    ),
  ).action(async (options: { team: string; json?: boolean }) => {
    const { client } = await context.connect();
    const list = await client.member.list.query({ teamId: await teamIdOf(client, options.team) });
    if (options.json) context.print(json(list));
    else context.print(table(list.members, MEMBER_COLUMNS));
  });

  withJson(
    withTeam(
      withExamples(members.command("set-role"), [
        {
          does: "Make a member an owner of the team",
          run: "members set-role alice owner --team night",
        },
        {
          does: "Make a member a viewer, by user id",
          run: "members set-role <userId> 10 --team <teamId>",
        },
      ])
        .description("Change a member's role (owners)")
        .argument("<user>", "the member's username or id")
        .argument("<role>", "dashboard, viewer, member or owner (or 5, 10, 30, 50)", teamRole),
    ),
  ).action(async (user: string, role: number, options: { team: string; json?: boolean }) => {
    const { client } = await context.connect();
    const teamId = await teamIdOf(client, options.team);
    const userId = await memberIdOf(client, teamId, user);
    const result = await client.member.setRole.mutate({ teamId, userId, role });
    context.print(options.json ? json(result) : `${user} is now ${roleName(role)} of the team.\n`);
  });

  withJson(
    withTeam(
      withExamples(members.command("remove"), [
        { does: "Remove a member from a team", run: "members remove bob --team night" },
        { does: "Leave a team yourself", run: "members remove <yourUsername> --team night" },
      ])
        .description("Remove a member (owners), or leave the team (your own username)")
        .argument("<user>", "the member's username or id"),
    ),
  ).action(async (user: string, options: { team: string; json?: boolean }) => {
    const { client } = await context.connect();
    const teamId = await teamIdOf(client, options.team);
    const userId = await memberIdOf(client, teamId, user);
    const result = await client.member.remove.mutate({ teamId, userId });
    context.print(options.json ? json(result) : `Removed ${user} from the team.\n`);
  });
}

// Invitations as a command line names them (rule.ts): a team's pending invitation by its id or
// its invitee's username or email; one sent to you by its id or by the team that sent it.
import type { Invitation } from "@flowplane/contract";
import type { Client } from "../client";
import { CliError } from "../errors";
import { when } from "../output";
import { pick } from "./rule";

/** Whom an invitation is for: a user's username, or the email it was sent to. */
export const invitee = (invitation: Invitation) =>
  "external" in invitation.invitee ? invitation.invitee.email : invitation.invitee.username;

/** The team's pending invitation named by its id or its invitee's username or email. */
export async function resolveTeamInvitation(
  client: Client,
  teamId: string,
  given: string,
): Promise<Invitation> {
  const { invitations } = await client.invitation.list.query({ teamId });
  return pick({
    kind: "pending invitation",
    given,
    scope: "of the team",
    candidates: invitations.map((i) => ({
      ...i,
      name: invitee(i),
      where: `sent ${when(i.sentAt)}`,
    })),
  });
}

/**
 * The invitation sent to you that the command line names: by its id, or by the team that sent it
 * (--team, its id, slug or name), or both (then they must agree).
 */
export async function resolveMyInvitation(
  client: Client,
  invitation: string | undefined,
  team: string | undefined,
): Promise<{ id: string; team: { name: string } }> {
  const { invitations } = await client.invitation.mine.query();
  const candidates = invitations.map((i) => ({
    ...i,
    name: i.team.name,
    where: `from team ${i.team.name}`,
  }));
  if (team === undefined) {
    return pick({ kind: "invitation", given: invitation!, scope: "of yours", candidates });
  }
  const from = await pick({
    kind: "team",
    given: team,
    scope: "among those that invited you",
    candidates: invitations.map((i) => ({ ...i.team, where: `slug ${i.team.slug}` })),
  });
  const found = invitations.find(
    (candidate) =>
      candidate.team.id === from.id && (invitation === undefined || candidate.id === invitation),
  );
  if (!found) {
    throw new CliError(`you have no invitation ${invitation} from team ${from.name}`, "not_found");
  }
  return found;
}

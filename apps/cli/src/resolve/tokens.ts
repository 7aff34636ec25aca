// Tokens and the broker's clients as a command line names them (rule.ts): the caller's personal
// access tokens, a team's MQTT clients, the platform's broker tokens.
import type { Client } from "../client";
import { when } from "../output";
import { listEvery, type Named, pick } from "./rule";
import type { TeamRef } from "./teams";

/** The caller's personal access token named by id or name. */
export async function resolveToken(client: Client, given: string): Promise<Named> {
  const { tokens } = await client.token.all.query();
  return pick({
    kind: "token",
    given,
    scope: "of yours",
    candidates: tokens.map((t) => ({
      id: t.id,
      name: t.name,
      where: `expires ${when(t.expiresAt)}, last used ${when(t.lastUsedAt)}`,
    })),
  });
}

/** The team's MQTT client named by id or username. */
export async function resolveBrokerClient(
  client: Client,
  team: TeamRef,
  given: string,
): Promise<Named> {
  const clients = await listEvery("clients", (cursor) =>
    client.broker.listClients.query({ teamId: team.id, cursor }),
  );
  return pick({
    kind: "MQTT client",
    given,
    scope: `of team ${team.name}`,
    candidates: clients.map((c) => ({
      id: c.id,
      name: c.username,
      where: c.owner
        ? `of ${c.owner.instanceType} ${c.owner.name}`
        : `created ${when(c.createdAt)}`,
    })),
  });
}

/** The broker token named by id or name (administrators). */
export async function resolveBrokerToken(client: Client, given: string): Promise<Named> {
  const { tokens } = await client.broker.listTokens.query();
  return pick({
    kind: "broker token",
    given,
    scope: "",
    candidates: tokens.map((t) => ({
      id: t.id,
      name: t.name,
      where: `created ${when(t.createdAt)}`,
    })),
  });
}

// The team broker's clients (FlowFuse's `/teams/{teamId}/broker/client…`), and the tokens an
// external broker uses to call /api/comms/v2 (Flowplane's; FlowFuse leaves those routes open).
// A change to a client reaches the broker at once: its ACLs decide the client's next operation,
// and a deleted client, or one whose password changed, is disconnected.
import { generateToken, hashPassword, tokenDigest } from "@flowplane/auth";
import {
  type BrokerClient,
  BrokerClientInput,
  BrokerClientList,
  type BrokerToken,
  BrokerTokenInput,
  BrokerTokenList,
  CreateBrokerClientInput,
  CreateBrokerTokenInput,
  ListBrokerClientsInput,
  NewBrokerToken,
  Status,
  UpdateBrokerClientInput,
  BrokerClient as BrokerClientSchema,
} from "@flowplane/contract";
import {
  type BrokerTokenRow,
  countBrokerClients,
  deleteBrokerClient,
  deleteBrokerToken,
  findBrokerClient,
  insertBrokerClient,
  insertBrokerToken,
  isUniqueViolation,
  listBrokerClients,
  listBrokerTokens,
  lockTeam,
  type TeamBrokerClientRow,
  teamLimits,
  updateBrokerClient,
} from "@flowplane/db";
import { z } from "zod";
import { ApiError, notFound } from "../core/errors";
import { actorOf, type Context, procedure, router, teamOf } from "../core/trpc";
import { recordBrokerTokenEvent, recordClientEvent } from "./events";

function clientView(row: TeamBrokerClientRow): BrokerClient {
  return {
    id: row.id,
    username: row.username,
    acls: row.acls.map(({ action, pattern }) => ({ action, pattern })),
    owner: null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function tokenView(row: BrokerTokenRow): BrokerToken {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

const TAG = "Team Broker";

/** Tell the broker; a hook failing must not undo a committed change. */
function announce(ctx: Context, change: { teamId: string; username: string; disconnect: boolean }) {
  try {
    ctx.broker?.changed(change);
  } catch (error) {
    ctx.log.error({ err: error }, "telling the broker of a client change failed");
  }
}

export const brokerRouter = router({
  listClients: procedure
    .meta({
      permission: "broker:clients:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/broker/clients",
        tags: [TAG],
        summary: "The team's MQTT clients (viewers and up)",
        description:
          "Sorted by username and paged by it: pass `meta.next_cursor` as `cursor`. `query` keeps the clients whose username contains it. Passwords are never returned.",
      },
    })
    .input(ListBrokerClientsInput)
    .output(BrokerClientList)
    .query(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const page = await listBrokerClients(ctx.db, teamId, {
        limit: input.limit,
        after: input.cursor,
        query: input.query,
      });
      return {
        meta: page.next === undefined ? {} : { next_cursor: page.next },
        count: page.rows.length,
        clients: page.rows.map(clientView),
      };
    }),

  createClient: procedure
    .meta({
      create: "replay",
      permission: "broker:clients:create",
      successStatus: 201,
      errors: [409],
      openapi: {
        method: "POST",
        path: "/api/v1/teams/{teamId}/broker/client",
        tags: [TAG],
        summary: "Create an MQTT client (owners)",
        description:
          "The client connects to the team broker with username and client id `<username>@<teamId>` and this password. `acls` decide what it may do: `publish`, `subscribe` or `both` on an MQTT topic filter, matched against the topics the client uses (bare: the broker keeps each team's topics apart). A username the team already has is 409 `client_already_exists`; past the team type's `teamBroker.clients.limit`, 400 `broker_client_limit_reached`. Unlike FlowFuse, usernames and patterns are validated here (400 `invalid_request` naming the field).",
      },
    })
    .input(CreateBrokerClientInput)
    .output(BrokerClientSchema)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const passwordHash = await hashPassword(input.password);
      const row = await ctx.db.transaction().execute(async (trx) => {
        // The team row is the lock: two creations cannot both take the last place.
        if (!(await lockTeam(trx, teamId))) throw notFound();
        const limit = (await teamLimits(trx, teamId))?.teamBroker?.clients?.limit ?? null;
        if (limit !== null && (await countBrokerClients(trx, teamId)) >= limit) {
          throw new ApiError(
            400,
            "broker_client_limit_reached",
            `The team's type allows ${limit} broker client${limit === 1 ? "" : "s"}`,
          );
        }
        if (await findBrokerClient(trx, teamId, input.username)) throw clientExists();
        let created: TeamBrokerClientRow;
        try {
          created = await insertBrokerClient(trx, {
            teamId,
            username: input.username,
            passwordHash,
            acls: input.acls,
          });
        } catch (error) {
          throw isUniqueViolation(error) ? clientExists() : error;
        }
        await recordClientEvent(trx, "created", actorOf(ctx), teamId, created);
        return created;
      });
      return clientView(row);
    }),

  getClient: procedure
    .meta({
      permission: "broker:clients:list",
      openapi: {
        method: "GET",
        path: "/api/v1/teams/{teamId}/broker/client/{username}",
        tags: [TAG],
        summary: "An MQTT client (viewers and up)",
        description:
          "404 (in the standard error envelope; FlowFuse sends `{}`) when there is none.",
      },
    })
    .input(BrokerClientInput)
    .output(BrokerClientSchema)
    .query(async ({ ctx, input }) => {
      const row = await findBrokerClient(ctx.db, teamOf(ctx).team.id, input.username);
      if (!row) throw notFound();
      return clientView(row);
    }),

  updateClient: procedure
    .meta({
      permission: "broker:clients:edit",
      successStatus: 201,
      openapi: {
        method: "PUT",
        path: "/api/v1/teams/{teamId}/broker/client/{username}",
        tags: [TAG],
        summary: "Change an MQTT client's password and/or ACLs (owners)",
        description:
          "201, as FlowFuse. New ACLs decide the client's next publish or subscription (subscriptions it holds stay). A new password ends the client's live session at once: it must connect again with the new one. A body with neither field changes nothing.",
      },
    })
    .input(UpdateBrokerClientInput)
    .output(BrokerClientSchema)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      const passwordHash =
        input.password === undefined ? undefined : await hashPassword(input.password);
      const row = await ctx.db.transaction().execute(async (trx) => {
        const before = await findBrokerClient(trx, teamId, input.username);
        if (!before) throw notFound();
        if (passwordHash === undefined && input.acls === undefined) return before;
        const after = await updateBrokerClient(trx, teamId, input.username, {
          passwordHash,
          acls: input.acls,
        });
        if (!after) throw notFound();
        await recordClientEvent(trx, "updated", actorOf(ctx), teamId, after, {
          ...(input.acls && { acls: { old: before.acls, new: after.acls } }),
          ...(passwordHash !== undefined && { password: "changed" }),
        });
        return after;
      });
      announce(ctx, { teamId, username: row.username, disconnect: passwordHash !== undefined });
      return clientView(row);
    }),

  deleteClient: procedure
    .meta({
      permission: "broker:clients:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/teams/{teamId}/broker/client/{username}",
        tags: [TAG],
        summary: "Delete an MQTT client (owners)",
        description:
          "Its live session is closed at once (FlowFuse leaves it connected), and it cannot connect again.",
      },
    })
    .input(BrokerClientInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      const teamId = teamOf(ctx).team.id;
      await ctx.db.transaction().execute(async (trx) => {
        const row = await deleteBrokerClient(trx, teamId, input.username);
        if (!row) throw notFound();
        await recordClientEvent(trx, "deleted", actorOf(ctx), teamId, row);
      });
      announce(ctx, { teamId, username: input.username, disconnect: true });
      return { status: "okay" as const };
    }),

  listTokens: procedure
    .meta({
      permission: "platform:broker-token:list",
      openapi: {
        method: "GET",
        path: "/api/v1/broker/tokens",
        tags: [TAG],
        summary: "Tokens of external brokers (administrators)",
        description:
          "An external broker (EMQX, with `BROKER_MODE=external`) sends one of these as a bearer token to `POST /api/comms/v2/auth` and `/acls`. Values are never shown again.",
      },
    })
    .input(z.void())
    .output(BrokerTokenList)
    .query(async ({ ctx }) => {
      const rows = await listBrokerTokens(ctx.db);
      return { count: rows.length, tokens: rows.map(tokenView) };
    }),

  createToken: procedure
    .meta({
      create: "secret",
      permission: "platform:broker-token:create",
      successStatus: 201,
      openapi: {
        method: "POST",
        path: "/api/v1/broker/tokens",
        tags: [TAG],
        summary: "Create a token for an external broker (administrators)",
        description:
          "The value (`fpb_…`) is in this reply only; it reaches nothing but the broker callbacks under `/api/comms/v2/`.",
      },
    })
    .input(CreateBrokerTokenInput)
    .output(NewBrokerToken)
    .mutation(async ({ ctx, input }) => {
      const token = generateToken("broker");
      const row = await ctx.db.transaction().execute(async (trx) => {
        const created = await insertBrokerToken(trx, {
          name: input.name,
          digest: tokenDigest(ctx.tokenSecret, token),
          createdBy: ctx.auth.userId,
        });
        await recordBrokerTokenEvent(trx, "created", actorOf(ctx), created);
        return created;
      });
      return { ...tokenView(row), token };
    }),

  deleteToken: procedure
    .meta({
      permission: "platform:broker-token:delete",
      openapi: {
        method: "DELETE",
        path: "/api/v1/broker/tokens/{tokenId}",
        tags: [TAG],
        summary: "Revoke an external broker's token (administrators)",
        description: "The broker's next callback with it gets 401.",
      },
    })
    .input(BrokerTokenInput)
    .output(Status)
    .mutation(async ({ ctx, input }) => {
      await ctx.db.transaction().execute(async (trx) => {
        const row = await deleteBrokerToken(trx, input.tokenId);
        if (!row) throw notFound();
        await recordBrokerTokenEvent(trx, "deleted", actorOf(ctx), row);
      });
      return { status: "okay" as const };
    }),
});

const clientExists = () =>
  new ApiError(409, "client_already_exists", "The team already has a client of that name");

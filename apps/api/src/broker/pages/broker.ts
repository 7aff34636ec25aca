// A team's broker (GET /teams/:teamId/broker): its MQTT clients with their ACLs, the broker's URL
// (as `settings.get` reports it; a platform without a broker says so) and how a client connects;
// for owners, creating a client (its password is never shown back), changing its ACLs on a page
// of its own (GET …/broker/clients/:username) and deleting it, asked first. Everything is the
// API's `broker.*` procedures, called as the signed-in user.
import type { BrokerAcl } from "@flowplane/contract";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { router } from "../../core/trpc";
import { field, fields, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage, signedIn } from "../../pages/page";
import { pageAt, pageLinks } from "../../pages/paging";
import { pageRoute } from "../../pages/render";
import { settingsRouter } from "../../platform/index";
import { teamPlace, teamRouter } from "../../teams/index";
import { brokerRouter } from "../procedures";

// The same procedures under the same names as the API's router (rate limits count by them).
const brokerProcedures = router({
  team: teamRouter,
  broker: brokerRouter,
  settings: settingsRouter,
});

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  brokerProcedures.createCaller(deps.context(request));

const NOTICES: Record<string, string> = {
  created: "The client is created. Its password is not shown again.",
  acls: "The client's ACLs are changed; they decide its next publish or subscription.",
  deleted: "The client is deleted and disconnected.",
};

const ACTIONS: BrokerAcl["action"][] = ["subscribe", "publish", "both"];

/** Blank ACL rows a form offers besides the client's own. */
const BLANK_ROWS = 3;

type Params = { teamId: string };
type ClientParams = Params & { username: string };

/** The ACL rows as posted (`action` and `pattern` repeated), leaving out those with no pattern. */
function aclsOf(body: unknown): BrokerAcl[] {
  const actions = fields(body, "action");
  return fields(body, "pattern")
    .map((pattern, i) => ({ action: actions[i] as BrokerAcl["action"], pattern: pattern.trim() }))
    .filter((acl) => acl.pattern !== "");
}

/** The rows a form shows: these ACLs, then blank ones. */
const rowsOf = (acls: BrokerAcl[]) => [
  ...acls,
  ...Array.from({ length: BLANK_ROWS }, () => ({ action: "subscribe", pattern: "" })),
];

interface BrokerState {
  create?: { username: string; acls: BrokerAcl[] };
  createError?: FormError;
  deleteError?: FormError;
}

export function brokerPages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };
  const brokerPage = (teamId: string) => `/teams/${encodeURIComponent(teamId)}/broker`;

  async function renderBroker(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    state: BrokerState = {},
  ) {
    const caller = callerOf(deps, request);
    const { teamId } = request.params;
    const at = pageAt(request.query);
    const place = await teamPlace(caller.team, teamId);
    const [clients, settings] = await Promise.all([
      caller.broker.listClients({ teamId, cursor: at.cursor }),
      caller.settings.get(),
    ]);
    const failed = state.createError ?? state.deleteError;
    return sendPage(
      deps,
      request,
      reply,
      "broker/pages/broker",
      {
        title: `Broker · ${place.team.name}`,
        place,
        clients: clients.clients,
        pager: {
          label: "Client pages",
          ...pageLinks(brokerPage(teamId), {}, at, clients.meta.next_cursor),
        },
        broker: settings["team:broker:url"]
          ? { url: settings["team:broker:url"], host: settings["team:broker:host"] }
          : undefined,
        actions: ACTIONS,
        create: {
          username: state.create?.username ?? "",
          rows: rowsOf(state.create?.acls ?? []),
        },
        createError: state.createError,
        deleteError: state.deleteError,
        deleteQuestion,
        notice: failed ? undefined : noticeOf(request, NOTICES),
      },
      failed?.status ?? 200,
    );
  }

  async function renderClient(
    request: FastifyRequest<{ Params: ClientParams }>,
    reply: FastifyReply,
    state: { acls?: BrokerAcl[]; error?: FormError } = {},
  ) {
    const caller = callerOf(deps, request);
    const { teamId, username } = request.params;
    const place = await teamPlace(caller.team, teamId);
    const client = await caller.broker.getClient({ teamId, username });
    return sendPage(
      deps,
      request,
      reply,
      "broker/pages/client",
      {
        title: `${client.username} · Broker · ${place.team.name}`,
        place,
        client,
        actions: ACTIONS,
        rows: rowsOf(state.acls ?? client.acls),
        error: state.error,
        deleteQuestion,
      },
      state.error?.status ?? 200,
    );
  }

  app.get<{ Params: Params }>("/teams/:teamId/broker", route, (request, reply) =>
    renderBroker(request, reply),
  );

  app.post<{ Params: Params }>("/teams/:teamId/broker/clients", route, async (request, reply) => {
    const create = { username: field(request.body, "username") ?? "", acls: aclsOf(request.body) };
    try {
      await callerOf(deps, request).broker.createClient({
        teamId: request.params.teamId,
        ...create,
        password: field(request.body, "password") ?? "",
      });
    } catch (error) {
      return renderBroker(request, reply, {
        create,
        createError: formError(request, reply, error),
      });
    }
    return reply.redirect(`${brokerPage(request.params.teamId)}?done=created`, 303);
  });

  app.get<{ Params: ClientParams }>(
    "/teams/:teamId/broker/clients/:username",
    route,
    (request, reply) => renderClient(request, reply),
  );

  app.post<{ Params: ClientParams }>(
    "/teams/:teamId/broker/clients/:username/acls",
    route,
    async (request, reply) => {
      const { teamId, username } = request.params;
      const acls = aclsOf(request.body);
      try {
        await callerOf(deps, request).broker.updateClient({ teamId, username, acls });
      } catch (error) {
        return renderClient(request, reply, { acls, error: formError(request, reply, error) });
      }
      return reply.redirect(`${brokerPage(teamId)}?done=acls`, 303);
    },
  );

  app.post<{ Params: ClientParams }>(
    "/teams/:teamId/broker/clients/:username/delete",
    route,
    async (request, reply) => {
      const caller = callerOf(deps, request);
      const { teamId, username } = request.params;
      if (field(request.body, "confirmed") !== "yes") {
        // No script ran to ask: ask on a page (for a client that is there).
        const place = await teamPlace(caller.team, teamId);
        const client = await caller.broker.getClient({ teamId, username });
        return sendPage(deps, request, reply, "teams/pages/confirm", {
          title: "Delete a broker client",
          question: deleteQuestion(client.username),
          action: `/teams/${place.team.id}/broker/clients/${encodeURIComponent(client.username)}/delete`,
          button: "Delete",
          back: brokerPage(teamId),
        });
      }
      try {
        await caller.broker.deleteClient({ teamId, username });
      } catch (error) {
        return renderBroker(request, reply, { deleteError: formError(request, reply, error) });
      }
      return reply.redirect(`${brokerPage(teamId)}?done=deleted`, 303);
    },
  );
}

export const deleteQuestion = (username: string) =>
  `Delete the MQTT client “${username}”? It is disconnected at once and cannot connect again.`;

// The catalogue, as administrators keep it: team types, instance types, stacks and templates,
// each at /admin/<kind> (the list and a form to create one) and /admin/<kind>/:id (its form to
// change it, and deleting it). One set of routes for the four, from their definitions
// (catalogue-kinds.ts); every change is the API's own procedure with its rules and messages (an
// entry in use is not deleted: the API says so).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendPage } from "../../pages/page";
import { type Entry, inputOf, KINDS, type KindPage, valuesOf } from "./catalogue-kinds";
import { adminRoute, type AdminCaller, sendRefusal } from "./shared";

type EntryParams = { id: string };

const noticesOf = (kind: KindPage): Record<string, string> => ({
  created: `The ${kind.noun} is created.`,
  saved: `The ${kind.noun} is changed.`,
  deleted: `The ${kind.noun} is deleted.`,
});

/** The posted values of the kind's fields. */
const postedValues = (kind: KindPage, body: unknown) =>
  Object.fromEntries(kind.fields.map((spec) => [spec.name, field(body, spec.name) ?? ""]));

/** Each select's choices, read from the API. */
async function choicesOf(kind: KindPage, caller: AdminCaller) {
  const entries = await Promise.all(
    kind.fields
      .filter((spec) => spec.choices)
      .map(async (spec) => [spec.name, await spec.choices!(caller)] as const),
  );
  return Object.fromEntries(entries);
}

export function cataloguePages(app: FastifyInstance, deps: PageDeps) {
  for (const kind of KINDS) kindPages(app, deps, kind);
}

function kindPages(app: FastifyInstance, deps: PageDeps, kind: KindPage) {
  const base = `/admin/${kind.key}`;
  const notices = noticesOf(kind);
  /** "an instance type", "a stack". */
  const aNoun = `${/^[aeiou]/.test(kind.noun) ? "an" : "a"} ${kind.noun}`;
  const idOf = (id: string) => ({ [kind.idField]: id });

  type State = { values?: Record<string, string>; error?: FormError };

  /** A page of the kind, with what `load` reads of the API (a failure there: the API's page). */
  async function render(
    request: FastifyRequest,
    reply: FastifyReply,
    caller: AdminCaller,
    state: State,
    load: () => Promise<{ template: string; title: string; entries?: Entry[]; entry?: Entry }>,
  ) {
    let page;
    let choices;
    try {
      page = await load();
      choices = await choicesOf(kind, caller);
    } catch (error) {
      return sendRefusal(deps, request, reply, error);
    }
    const { template, title, ...loaded } = page;
    return sendPage(
      deps,
      request,
      reply,
      `platform/pages/${template}`,
      {
        title: `${title}${kind.title} · Administration`,
        tab: kind.key,
        kind,
        aNoun,
        base,
        ...loaded,
        choices,
        values: state.values ?? valuesOf(kind, loaded.entry),
        error: state.error,
        notice: state.error ? undefined : noticeOf(request, notices),
      },
      state.error?.status ?? 200,
    );
  }

  const renderList = (
    request: FastifyRequest,
    reply: FastifyReply,
    caller: AdminCaller,
    state: State = {},
  ) =>
    render(request, reply, caller, state, async () => {
      const list = await kind.procedures(caller).all({ ...kind.listInput, limit: 1000 });
      return { template: "catalogue", title: "", entries: list[kind.listKey] as Entry[] };
    });

  const renderEntry = (
    request: FastifyRequest<{ Params: EntryParams }>,
    reply: FastifyReply,
    caller: AdminCaller,
    state: State = {},
  ) =>
    render(request, reply, caller, state, async () => {
      const entry = await kind.procedures(caller).byId(idOf(request.params.id));
      return { template: "catalogue-entry", title: `${entry.name} · `, entry };
    });

  adminRoute(app, deps, "GET", base, (request, reply, caller) =>
    renderList(request, reply, caller),
  );

  adminRoute(app, deps, "POST", base, async (request, reply, caller) => {
    const values = postedValues(kind, request.body);
    let created: Entry;
    try {
      created = await kind.procedures(caller).create(inputOf(kind, values));
    } catch (error) {
      return renderList(request, reply, caller, {
        values,
        error: formError(request, reply, error),
      });
    }
    return reply.redirect(`${base}/${created.id}?done=created`, 303);
  });

  adminRoute<EntryParams>(app, deps, "GET", `${base}/:id`, (request, reply, caller) =>
    renderEntry(request, reply, caller),
  );

  adminRoute<EntryParams>(app, deps, "POST", `${base}/:id`, async (request, reply, caller) => {
    const values = postedValues(kind, request.body);
    const procedures = kind.procedures(caller);
    try {
      const before = await procedures.byId(idOf(request.params.id));
      await procedures.update({ ...idOf(before.id), ...inputOf(kind, values, before) });
    } catch (error) {
      return renderEntry(request, reply, caller, {
        values,
        error: formError(request, reply, error),
      });
    }
    return reply.redirect(`${base}/${request.params.id}?done=saved`, 303);
  });

  adminRoute<EntryParams>(
    app,
    deps,
    "POST",
    `${base}/:id/delete`,
    async (request, reply, caller) => {
      const procedures = kind.procedures(caller);
      const id = idOf(request.params.id);
      if (field(request.body, "confirmed") !== "yes") {
        // No script ran to ask: ask on a page.
        let entry: Entry;
        try {
          entry = await procedures.byId(id);
        } catch (error) {
          return sendRefusal(deps, request, reply, error);
        }
        return sendPage(deps, request, reply, "platform/pages/confirm", {
          title: `Delete ${aNoun}`,
          question: `Delete the ${kind.noun} “${entry.name}”?`,
          action: `${base}/${entry.id}/delete`,
          button: "Delete",
          cancel: `${base}/${entry.id}`,
        });
      }
      try {
        await procedures.delete(id);
      } catch (error) {
        return renderEntry(request, reply, caller, { error: formError(request, reply, error) });
      }
      return reply.redirect(`${base}?done=deleted`, 303);
    },
  );
}

// A team's library (GET /teams/:teamId/library): the entries its Node-RED instances share, in a
// folder and below it (`?path=`), of one type or all (`?type=`), a page at a time; one entry's
// content (GET …/library/entry, read-only); saving an entry and deleting an entry or a whole
// folder (members and owners, asked first). Folders are the entries' paths: there is none
// without an entry. Everything is the API's `library.*` procedures, called as the signed-in user.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { router } from "../../core/trpc";
import { field, type FormError, formError } from "../../pages/forms";
import { noticeOf, type PageDeps, sendFailure, sendPage, signedIn } from "../../pages/page";
import { pageAt, pageLinks } from "../../pages/paging";
import { pageRoute } from "../../pages/render";
import { teamPlace, teamRouter } from "../../teams/index";
import { libraryRouter } from "../procedures";

// The same procedures under the same names as the API's router (rate limits count by them).
const libraryProcedures = router({ team: teamRouter, library: libraryRouter });

const callerOf = (deps: PageDeps, request: FastifyRequest) =>
  libraryProcedures.createCaller(deps.context(request));

const NOTICES: Record<string, string> = {
  saved: "The entry is saved; every instance of the team sees it in its library.",
  deleted: "Deleted from the team library.",
};

/** The types Node-RED's library panel knows, offered when saving. */
const TYPES = ["flows", "functions", "templates"];

type Params = { teamId: string };
const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

/** The part of a path after its folder, and the folder. */
function split(path: string) {
  const slash = path.lastIndexOf("/");
  return { folder: slash < 0 ? "" : path.slice(0, slash), name: path.slice(slash + 1) };
}

/** A body as it reads best: JSON indented, anything else as it is. */
function readable(body: string) {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

interface LibraryState {
  save?: { type: string; path: string; body: string };
  saveError?: FormError;
  deleteError?: FormError;
}

export function libraryPages(app: FastifyInstance, deps: PageDeps) {
  const route = { ...pageRoute, preHandler: signedIn({ page: "/teams" }) };
  const libraryPage = (teamId: string) => `/teams/${encodeURIComponent(teamId)}/library`;

  async function renderLibrary(
    request: FastifyRequest<{ Params: Params }>,
    reply: FastifyReply,
    state: LibraryState = {},
  ) {
    const caller = callerOf(deps, request);
    const { teamId } = request.params;
    const query = request.query as Record<string, unknown>;
    const filters = { path: text(query.path), type: text(query.type) };
    const at = pageAt(query);
    const place = await teamPlace(caller.team, teamId);
    let list: Awaited<ReturnType<typeof caller.library.list>> | undefined;
    let listError: FormError | undefined;
    try {
      list = await caller.library.list({ teamId, ...filters, cursor: at.cursor, limit: 50 });
    } catch (error) {
      // A filter the API refuses is shown above the list, with its status.
      listError = formError(request, reply, error);
    }
    const prefix = filters.path ? `${filters.path}/` : "";
    const folders = new Set<string>();
    for (const entry of list?.entries ?? []) {
      const rest = entry.path.slice(prefix.length);
      if (rest.includes("/")) folders.add(prefix + rest.slice(0, rest.indexOf("/")));
    }
    const failed = listError ?? state.saveError ?? state.deleteError;
    return sendPage(
      deps,
      request,
      reply,
      "library/pages/library",
      {
        title: `Library · ${place.team.name}`,
        place,
        filters,
        types: TYPES,
        entries: (list?.entries ?? []).map((entry) => ({ ...entry, ...split(entry.path) })),
        folders: [...folders].sort(),
        parent: filters.path === undefined ? undefined : split(filters.path).folder,
        pager: {
          label: "Library pages",
          ...pageLinks(libraryPage(teamId), filters, at, list?.meta.next_cursor),
        },
        listError,
        save: state.save ?? { type: filters.type ?? "flows", path: prefix, body: "" },
        saveError: state.saveError,
        deleteError: state.deleteError,
        deleteQuestion,
        notice: failed ? undefined : noticeOf(request, NOTICES),
      },
      failed?.status ?? 200,
    );
  }

  app.get<{ Params: Params }>("/teams/:teamId/library", route, (request, reply) =>
    renderLibrary(request, reply),
  );

  app.get<{ Params: Params }>("/teams/:teamId/library/entry", route, async (request, reply) => {
    const caller = callerOf(deps, request);
    const { teamId } = request.params;
    const query = request.query as Record<string, unknown>;
    const place = await teamPlace(caller.team, teamId);
    try {
      const entry = await caller.library.get({
        teamId,
        type: text(query.type) ?? "",
        path: text(query.path) ?? "",
      });
      return sendPage(deps, request, reply, "library/pages/entry", {
        title: `${entry.path} · Library · ${place.team.name}`,
        place,
        entry: { ...entry, ...split(entry.path) },
        body: readable(entry.body),
      });
    } catch (error) {
      return sendFailure(deps, request, reply, error, "No such library entry", {
        href: libraryPage(teamId),
        label: "Back to the library",
      });
    }
  });

  app.post<{ Params: Params }>("/teams/:teamId/library/entry", route, async (request, reply) => {
    const save = {
      type: field(request.body, "type") ?? "",
      path: field(request.body, "path") ?? "",
      body: field(request.body, "body") ?? "",
    };
    try {
      await callerOf(deps, request).library.save({ teamId: request.params.teamId, ...save });
    } catch (error) {
      return renderLibrary(request, reply, { save, saveError: formError(request, reply, error) });
    }
    const folder = split(save.path).folder;
    const back = folder ? `&path=${encodeURIComponent(folder)}` : "";
    return reply.redirect(`${libraryPage(request.params.teamId)}?done=saved${back}`, 303);
  });

  app.post<{ Params: Params }>("/teams/:teamId/library/delete", route, async (request, reply) => {
    const caller = callerOf(deps, request);
    const { teamId } = request.params;
    const type = field(request.body, "type") || undefined;
    const path = field(request.body, "path") ?? "";
    if (field(request.body, "confirmed") !== "yes") {
      // No script ran to ask: ask on a page.
      const place = await teamPlace(caller.team, teamId);
      return sendPage(deps, request, reply, "teams/pages/confirm", {
        title: "Delete from the library",
        place,
        question: deleteQuestion(type, path),
        action: `/teams/${place.team.id}/library/delete`,
        fields: { path, ...(type && { type }) },
        button: "Delete",
        back: libraryPage(teamId),
      });
    }
    try {
      await caller.library.delete({ teamId, type, path });
    } catch (error) {
      return renderLibrary(request, reply, { deleteError: formError(request, reply, error) });
    }
    return reply.redirect(`${libraryPage(teamId)}?done=deleted`, 303);
  });
}

/** What deleting asks: an entry of one type, or a folder with all in it. */
export const deleteQuestion = (type: string | undefined, path: string) =>
  type
    ? `Delete the ${type} entry “${path}” from the team library? Every instance stops showing it.`
    : `Delete the folder “${path}” and every entry in it from the team library?`;

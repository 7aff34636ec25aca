// The platform's catalogue (FlowFuse's `/project-types`, `/stacks` and `/templates`): everyone may
// list and read it; administrators create, change and delete its entries. Instances reference one
// of each, so an entry an instance uses cannot be deleted (make it inactive instead). One builder
// makes the five procedures of every kind from its definition (kind.ts).
import { Status } from "@flowplane/contract";
import type { z } from "zod";
import { isForeignKeyViolation, isUniqueViolation } from "@flowplane/db";
import { notFound } from "../core/errors";
import { actorOf, procedure, router } from "../core/trpc";
import { recordCatalogueEvent } from "./events";
import {
  type CatalogueKind,
  type ChangeOf,
  changes,
  type Entry,
  inUse,
  type KindSchemas,
  nameTaken,
  nothingToChange,
  type Operation,
  permissionOf,
} from "./kind";

/**
 * The kind's procedures, typed by its schemas. (Inside, the kind's functions are typed by the same
 * schemas, which TypeScript cannot see through tRPC's generic parsers: hence the `as` below.)
 */
export function catalogueRouter<Row extends Entry, Detail extends Row, S extends KindSchemas>(
  kind: CatalogueKind<Row, Detail, S>,
) {
  type In<T extends keyof S> = z.output<S[T]>;
  /** What a resolver returns: the kind's view, parsed by the output schema. */
  const out = (value: unknown) => value as never;
  const collection = `/api/v1/${kind.path}` as const;
  const one = `${collection}/{${kind.idField}}` as const;
  const openapi = (
    operation: Operation,
    method: "GET" | "POST" | "PUT" | "DELETE",
    path: `/${string}`,
  ) => ({ method, path, tags: [kind.tag], ...kind.docs[operation] });
  const idOf = (input: unknown) => (input as Record<string, string>)[kind.idField]!;

  const the = `The ${kind.noun}`;

  /** A write's refusals for what the database refused: a taken name, a vanished reference. */
  const refused = (error: unknown) => {
    if (isUniqueViolation(error)) return nameTaken(kind.noun);
    if (kind.missingReference && isForeignKeyViolation(error)) return kind.missingReference();
    return error;
  };

  return router({
    all: procedure
      .meta({ permission: permissionOf(kind, "list"), openapi: openapi("all", "GET", collection) })
      .input(kind.schemas.list as S["list"])
      .output(kind.schemas.listOutput as S["listOutput"])
      .query(async ({ ctx, input }) => {
        const page = await kind.list(ctx.db, input as In<"list">);
        const listed = kind.summaryView ?? kind.view;
        return out(
          kind.listOf(
            { meta: page.nextCursor ? { next_cursor: page.nextCursor } : {}, count: page.total },
            page.rows.map((row) => listed(row, ctx.baseUrl)),
          ),
        );
      }),

    byId: procedure
      .meta({ permission: permissionOf(kind, "read"), openapi: openapi("byId", "GET", one) })
      .input(kind.schemas.id as S["id"])
      .output(kind.schemas.view as S["view"])
      .query(async ({ ctx, input }) => {
        const row = await kind.findDetail(ctx.db, idOf(input));
        if (!row) throw notFound();
        return out(kind.view(row, ctx.baseUrl));
      }),

    create: procedure
      .meta({
        permission: permissionOf(kind, "create"),
        errors: [409],
        create: "replay",
        openapi: openapi("create", "POST", collection),
      })
      .input(kind.schemas.create as S["create"])
      .output(kind.schemas.view as S["view"])
      .mutation(async ({ ctx, input }) => {
        try {
          const row = await ctx.db.transaction().execute(async (trx) => {
            const created = await kind.insert(trx, input as In<"create">);
            await recordCatalogueEvent(
              trx,
              actorOf(ctx),
              kind,
              "created",
              created.row,
              created.audit,
            );
            return created.row;
          });
          return out(kind.view(kind.unused(row), ctx.baseUrl));
        } catch (error) {
          throw refused(error);
        }
      }),

    update: procedure
      .meta({
        permission: permissionOf(kind, "edit"),
        errors: [409],
        openapi: openapi("update", "PUT", one),
      })
      .input(kind.schemas.update as S["update"])
      .output(kind.schemas.view as S["view"])
      .mutation(async ({ ctx, input }) => {
        const id = idOf(input);
        const { [kind.idField]: _id, ...given } = input as Record<string, unknown>;
        try {
          const row = await ctx.db.transaction().execute(async (trx) => {
            const before = await kind.before(trx, id);
            if (!before) throw notFound();
            if (Object.values(given).every((value) => value === undefined)) {
              throw nothingToChange(kind.fields);
            }
            const change = kind.prepare
              ? await kind.prepare(trx, given as ChangeOf<S>, before, id)
              : (given as ChangeOf<S>);
            const updates = changes(change, (key) => kind.column(before, key));
            await kind.checkUpdates?.(trx, updates, id);
            if (updates.length > 0) {
              const after = await kind.update(trx, id, change);
              if (!after) throw notFound();
              await recordCatalogueEvent(trx, actorOf(ctx), kind, "updated", after, {
                updates: kind.loggedUpdates ? kind.loggedUpdates(updates) : updates,
              });
            }
            return kind.findDetail(trx, id);
          });
          if (!row) throw notFound();
          return out(kind.view(row, ctx.baseUrl));
        } catch (error) {
          throw refused(error);
        }
      }),

    delete: procedure
      .meta({ permission: permissionOf(kind, "delete"), openapi: openapi("delete", "DELETE", one) })
      .input(kind.schemas.id as S["id"])
      .output(Status)
      .mutation(async ({ ctx, input }) => {
        try {
          await ctx.db.transaction().execute(async (trx) => {
            const entry = await kind.lock(trx, idOf(input));
            if (!entry) throw notFound();
            const uses = await kind.usage(trx, entry.id);
            if (uses.some(([n]) => n > 0)) throw inUse(the, uses);
            if (!(await kind.delete(trx, entry.id))) throw notFound();
            await recordCatalogueEvent(trx, actorOf(ctx), kind, "deleted", entry);
          });
        } catch (error) {
          // Something given the entry while this ran: the reference refuses the delete.
          if (isForeignKeyViolation(error)) throw inUse(the, [[undefined, "instance"]]);
          throw error;
        }
        return { status: "okay" as const };
      }),
  });
}

// The events a test reads, once every event written is numbered (as the runner's flush would; the
// runner is the server's own, so the test waits for it): a team's, of some types, of one entity.
import { type EventRecord, listEvents } from "@flowplane/db";
import { sql } from "kysely";
import type { TestServer } from "./harness";
import { waiter } from "./until";

const until = waiter(20_000, 50);

export async function platformEvents(
  server: TestServer,
  teamId: string,
  types: string[],
  entityId?: string,
): Promise<EventRecord[]> {
  await until("every event numbered", async () => {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from events
      where seq is null`.execute(server.db);
    return rows[0]!.n === 0 ? true : undefined;
  });
  return listEvents(server.db, { teamId, types, entityId, limit: 1000 });
}

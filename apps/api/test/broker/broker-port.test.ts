// The embedded broker's default port, when it is taken at the first start: the broker takes a free
// one and keeps it, so the team clients configured with it keep working after a restart; a kept
// port taken by another program is refused with the variable to set, not traded for another.
import { createTestDb, type TestDb } from "@flowplane/db/testing";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { freePort, startServer } from "../support/harness";

let db: TestDb;
let dataDir: string;
const occupied: Server[] = [];

beforeAll(async () => {
  db = await createTestDb();
  dataDir = await mkdtemp(join(tmpdir(), "flowplane-broker-port-"));
});
afterAll(async () => {
  for (const server of occupied) server.close();
  await db.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function occupy(port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  occupied.push(server);
}

const keepPortIn = () => join(dataDir, "mqtt-port");

async function brokerUrlOfAStart(defaultPort: number): Promise<string> {
  const server = await startServer({
    db,
    dataDir,
    broker: {
      mode: "embedded",
      host: "127.0.0.1",
      port: defaultPort,
      fallBackWhenTaken: true,
      keepPortIn: keepPortIn(),
      dataDir: join(dataDir, "mqtt"),
    },
  });
  try {
    const settings = await server.request("GET", "/api/v1/settings");
    return settings.body["team:broker:url"] as string;
  } finally {
    await server.close();
  }
}

test("the port taken instead of a taken default is kept for every later start, and a kept port taken is refused", async () => {
  const defaultPort = await freePort();
  await occupy(defaultPort);

  const first = await brokerUrlOfAStart(defaultPort);
  const taken = Number(new URL(first).port);
  expect(taken).not.toBe(defaultPort);
  expect((await readFile(keepPortIn(), "utf8")).trim()).toBe(String(taken));

  // The default port free again or not, the clients' port is the one they were given.
  occupied.pop()!.close();
  expect(await brokerUrlOfAStart(defaultPort)).toBe(first);

  await occupy(taken);
  await expect(brokerUrlOfAStart(defaultPort)).rejects.toThrow(
    new RegExp(`MQTT port ${taken} on 127\\.0\\.0\\.1 is taken.*set MQTT_PORT`),
  );
  // Nothing was traded: the kept port is still the clients'.
  expect((await readFile(keepPortIn(), "utf8")).trim()).toBe(String(taken));
});

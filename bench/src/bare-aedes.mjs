// The MQTT baseline: aedes with the same persistence as the platform's embedded broker (LevelDB in
// the directory given as the first argument) and no hooks at all: no authentication, no ACL, no
// per-team mount. Run as its own process, like the API; reports {"port": …} on its first line.
import { Aedes } from "aedes";
import persistenceLevel from "aedes-persistence-level";
import { Level } from "level";
import { createServer } from "node:net";
import process from "node:process";

const directory = process.argv[2];
if (!directory) throw new Error("usage: bare-aedes.mjs <data directory>");
const level = new Level(directory);
const broker = new Aedes({ persistence: persistenceLevel(level) });
await broker.listen();
const server = createServer((socket) => broker.handle(socket));
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});

const stop = () => {
  server.close();
  broker.close(() => level.close().finally(() => process.exit(0)));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

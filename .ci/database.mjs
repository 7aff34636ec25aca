// Creates or drops a PostgreSQL database for one CI run: `node database.mjs create|drop <url> <name>`.
// Loads `pg` from the workspace (run it with the db package as the working directory).
import { createRequire } from "node:module";
import { join } from "node:path";

const [action, url, name] = process.argv.slice(2);
if (!["create", "drop"].includes(action) || !url || !/^[a-z0-9_]+$/.test(name ?? "")) {
  console.error("usage: database.mjs create|drop <server-url> <name>");
  process.exit(2);
}
const pg = createRequire(join(process.cwd(), "package.json"))("pg");
const client = new pg.Client({ connectionString: url });
await client.connect();
try {
  await client.query(
    action === "create"
      ? `create database ${name}`
      : `drop database if exists ${name} with (force)`,
  );
} finally {
  await client.end();
}

// The operator's commands on a platform's machine, with the platform's environment (DATA_DIR,
// DATABASE_URL, DATABASE): `pnpm backup --output FILE` and `pnpm restore FILE` (backup.ts).
import { Command } from "commander";
import { pino } from "pino";
import { ConfigError, loadConfig } from "../env";
import { backup, OperationRefused, restore } from "./backup";

process.umask(0o077);

// What the embedded PostgreSQL and the database's choice say goes to stderr, warnings only.
const log = pino({ level: "warn" }, pino.destination(2));

async function run(what: () => Promise<string>): Promise<void> {
  try {
    process.stdout.write(`${await what()}\n`);
  } catch (error) {
    const known = error instanceof OperationRefused || error instanceof ConfigError;
    process.stderr.write(
      `${known ? "" : "failed: "}${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exitCode = 1;
  }
}

const program = new Command("flowplane-operations").description(
  "Back up and restore a Flowplane platform (run with the platform's environment)",
);
program
  .command("backup")
  .description("Write a backup of the platform (it may be running) to a new 0600 file")
  .requiredOption("-o, --output <file>", "the archive to write (.tar.gz)")
  .action((options: { output: string }) =>
    run(async () => {
      const manifest = await backup(loadConfig(), options.output, log);
      const rows = manifest.dump.tables.reduce((sum, t) => sum + t.rows, 0);
      return `backup written to ${options.output} (${manifest.database}, ${rows} rows, schema ${manifest.migration})`;
    }),
  );
program
  .command("restore")
  .description("Restore a backup into an empty DATA_DIR (the platform stopped)")
  .argument("<file>", "the archive `backup` wrote")
  .action((file: string) =>
    run(async () => {
      const config = loadConfig();
      const manifest = await restore(config, file, log);
      return `restored ${file} (made ${manifest.createdAt}) into ${config.DATA_DIR}: start the platform`;
    }),
  );
await program.parseAsync();

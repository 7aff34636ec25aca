// The process the local driver started for a hosted instance (bubblewrap, or Node-RED without a
// sandbox), for the tests that kill it to see a crash: of the processes given the instance's id,
// the one whose parent was not.
import { readdir, readFile } from "node:fs/promises";
import { waiter } from "./until";

const until = waiter(60_000, 100);

export function nodeRedPid(instanceId: string): Promise<number> {
  const given = async (pid: string) =>
    (await readFile(`/proc/${pid}/environ`, "utf8").catch(() => ""))
      .split("\0")
      .includes(`FLOWPLANE_INSTANCE_ID=${instanceId}`);
  return until("Node-RED's pid", async () => {
    for (const name of await readdir("/proc")) {
      if (!/^\d+$/.test(name) || !(await given(name))) continue;
      const status = await readFile(`/proc/${name}/status`, "utf8").catch(() => "");
      const parent = /^PPid:\s+(\d+)$/m.exec(status)?.[1];
      if (parent && !(await given(parent))) return Number(name);
    }
    return undefined;
  });
}

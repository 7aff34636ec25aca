// A driver that runs nothing, for the tests that walk every operation (permissions, isolation,
// inputs): they call the instance routes hundreds of times, and what they check is the API's
// answer, not Node-RED's. The instance tests (instances.test.ts) use the local driver and real
// Node-RED processes.
import type { Driver, InstanceSpec, LogEntry, RuntimeStatus } from "@flowplane/runtime";

export class InMemoryDriver implements Driver {
  readonly name = "in-memory";
  private readonly states = new Map<string, RuntimeStatus>();
  private readonly logs_ = new Map<string, LogEntry[]>();
  private readonly listeners: ((id: string, status: RuntimeStatus) => void)[] = [];

  private set(id: string, state: RuntimeStatus["state"]) {
    const status: RuntimeStatus = { state, endpoint: null };
    this.states.set(id, status);
    const log = this.logs_.get(id) ?? [];
    log.push({ ts: (log.at(-1)?.ts ?? Date.now()) + 1, level: "system", msg: `now ${state}` });
    this.logs_.set(id, log);
    for (const listener of this.listeners) listener(id, status);
  }

  async create(spec: InstanceSpec) {
    if (!this.states.has(spec.id)) this.set(spec.id, "stopped");
  }
  async start(spec: InstanceSpec) {
    this.set(spec.id, "running");
  }
  async stop(id: string) {
    this.set(id, "stopped");
  }
  async restart(spec: InstanceSpec) {
    this.set(spec.id, "running");
  }
  async suspend(id: string) {
    this.set(id, "stopped");
  }
  async remove(id: string) {
    this.states.delete(id);
    this.logs_.delete(id);
  }
  async status(id: string): Promise<RuntimeStatus> {
    return this.states.get(id) ?? { state: "absent", endpoint: null };
  }
  async logs(id: string, query: { cursor?: number; backwards?: boolean; limit: number }) {
    const log = this.logs_.get(id) ?? [];
    const entries = query.backwards
      ? log.filter((e) => e.ts < (query.cursor ?? Infinity)).slice(-query.limit)
      : query.cursor === undefined
        ? log.slice(-query.limit)
        : log.filter((e) => e.ts > query.cursor!).slice(0, query.limit);
    return { entries };
  }
  onStateChange(listener: (id: string, status: RuntimeStatus) => void) {
    this.listeners.push(listener);
  }
  async isolation() {
    return {
      mode: "none" as const,
      user: "platform" as const,
      required: false,
      network: "host" as const,
      reason: "runs nothing",
    };
  }

  async ids() {
    return [...this.states.keys()];
  }

  async close() {}
}

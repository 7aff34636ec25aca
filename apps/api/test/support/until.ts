// Waiting for what the server, Node-RED or a browser reports: a check asked again and again until
// it answers something, bounded so that a hang fails naming what was awaited.

/**
 * A waiter whose checks may take `within` ms (unless a call says otherwise), asked every `every`
 * ms; it answers the first value a check returns that is not `undefined`.
 */
export function waiter(within: number, every = 100) {
  return async function until<T>(
    what: string,
    check: () => Promise<T | undefined>,
    ms = within,
  ): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, every));
    }
  };
}

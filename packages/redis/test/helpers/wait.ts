/** Polls `predicate` every few ms until it holds; throws with `what` after `timeoutMs`. */
export async function until(
  predicate: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Lets the event loop turn `turns` times: ioredis-mock replies with promise jobs and nextTicks, and
 * the worker batches with setImmediate, so what is under way lands within a few turns, on an idle
 * machine or a loaded one alike (a sleep of a few ms is not enough there, and too long here).
 */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

let counter = 0;
/** A namespace no other test uses (the mock's instances share one keyspace). */
export function uniqueNamespace(label = 'ns'): string {
  return `${label}-${process.pid}-${Date.now().toString(36)}-${counter++}`;
}

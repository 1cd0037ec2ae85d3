/**
 * maxWaitMs under concurrent schedulers, for a real redis-server and a Redis Cluster alike:
 * several clients replace one timer every few ms for a while, one worker fires it, and the
 * assertions hold the cap (no window longer than maxWaitMs while the schedules go on), the
 * stored due times (every fire is one a schedule() call returned) and the trailing fire.
 * Test code only; real time, bounded to a few seconds.
 */
import { expect } from 'vitest';
import { RedisTimers } from '../../src/redis-timers.js';
import type { RedisClient, RedisTimersOptions } from '../../src/types.js';
import { sleep, uniqueNamespace, until } from './wait.js';

export interface DebounceLoad {
  /** Due times of the fires, in order. */
  fires: number[];
  /** Schedule calls made (all resolved). */
  calls: number;
}

export async function debounceUnderLoad(
  client: () => RedisClient,
  options: Partial<RedisTimersOptions> = {},
  { schedulers = 4, waitMs = 150, maxWaitMs = 500, burstMs = 1_600, everyMs = 10 } = {},
): Promise<DebounceLoad> {
  const namespace = uniqueNamespace('debounce');
  const make = () => new RedisTimers({ redis: client(), namespace, ...options });
  const worker = make();
  const fires: Array<{ dueAt: number; startedAt: number }> = [];
  await worker.start(({ dueAt }) => void fires.push({ dueAt, startedAt: Date.now() }));
  const returned = new Set<number>();
  let calls = 0;
  const instances = Array.from({ length: schedulers }, make);
  // Connected (and the cluster's slots known) before the burst starts.
  await Promise.all(instances.map((t) => t.get('burst')));
  const started = Date.now();
  await Promise.all(
    instances.map(async (t, k) => {
      await sleep(k * (everyMs / schedulers));
      while (Date.now() - started < burstMs) {
        returned.add(await t.schedule('burst', waitMs, { k }, { ifExists: 'replace', maxWaitMs }));
        calls++;
        await sleep(everyMs);
      }
    }),
  );
  const lastCall = Date.now();
  await until(async () => (await worker.get('burst')) === undefined, 'the trailing fire', 5_000);
  await worker.stop();
  const dues = fires.map((f) => f.dueAt);
  // Every fire is at a due time a schedule() call resolved with, and none started before it.
  for (const f of fires) {
    expect(returned.has(f.dueAt), `fire due ${f.dueAt} was returned by a schedule() call`).toBe(true);
    expect(f.startedAt).toBeGreaterThanOrEqual(f.dueAt - 1);
  }
  // Each window's values: what the calls between two fires returned. Its first call returned
  // open + waitMs (server clock), so the window's cap is exactly open + maxWaitMs; every call of
  // it returned at most that, and its fire is the last of them.
  const values = [...returned].sort((a, b) => a - b);
  const span = lastCall - (values[0] - waitMs);
  expect(dues.length).toBeGreaterThanOrEqual(Math.floor(span / (maxWaitMs + 50)));
  for (let i = 0; i < dues.length; i++) {
    const window = values.filter((v) => v <= dues[i] && (i === 0 || v > dues[i - 1]));
    const open = window[0] - waitMs;
    expect(window.at(-1)).toBe(dues[i]);
    expect(dues[i]).toBeLessThanOrEqual(open + maxWaitMs);
    if (i > 0) expect(dues[i] - dues[i - 1]).toBeGreaterThanOrEqual(Math.min(waitMs, maxWaitMs));
  }
  // The last write stored the latest due time; it fired last, at most waitMs after the last call.
  expect(dues.at(-1)).toBe(Math.max(...returned));
  expect(dues.at(-1)! - lastCall).toBeLessThanOrEqual(waitMs);
  return { fires: dues, calls };
}

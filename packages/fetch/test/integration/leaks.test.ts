import { getEventListeners } from 'node:events';
import { currentDeadline, TimingWheel, withDeadline } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { withTimeouts } from '../../src/with-timeouts.js';
import { FETCH_IMPLEMENTATIONS } from '../helpers/fetch-implementations.js';
import { useTestServer } from '../helpers/http-server.js';

const REQUESTS = 10_000;
const WARMUP = 1_000;
const CONCURRENCY = 16;
/**
 * A backstop with room for undici's own pools and JIT noise (bare fetch measures 40-100 B here);
 * AbortSignal.timeout(60_000) alone keeps about 1,100 B per request for its 60 s. The WeakRef
 * samples are the exact check.
 */
const MAX_RETAINED_BYTES_PER_REQUEST = 400;

function fullGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc (the fetch project sets it in vitest.config.mts)');
  gc();
  gc();
}

/**
 * Collects until the heap settles. WeakRef targets stay alive until the job that created them
 * ends, and fetch's Request keeps the signal it was given in a FinalizationRegistry entry that is
 * only dropped once its cleanup callback has run after a collection, so alternate turns and GCs.
 */
async function quiesce(): Promise<void> {
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    fullGc();
  }
}

// undici.fetch has its own Request/Response types; the tests call each as the global fetch.
describe.each(FETCH_IMPLEMENTATIONS.map((impl) => [impl.name, impl.fetch] as const))(
  'withTimeouts(%s) after many completed requests',
  (_name, fetchFn) => {
    const { base: baseUrl } = useTestServer();

    it(
      `holds no timer, no listener and no per-request object after ${REQUESTS} requests with 60 s limits`,
      { timeout: 60_000 },
      async () => {
        const wheel = new TimingWheel();
        const caller = new AbortController();
        const sampled: Array<WeakRef<object>> = [];
        let calls = 0;
        const recordingFetch = ((input: string, init?: RequestInit) => {
          // Sample what requests allocate: the signal fetch got and the response it returned.
          const sample = calls++ % 100 === 0;
          if (sample) sampled.push(new WeakRef(init!.signal!));
          return fetchFn(input, init).then((res) => {
            if (sample) sampled.push(new WeakRef(res));
            return res;
          });
        }) as typeof fetchFn;
        const timed = withTimeouts(recordingFetch, { headersMs: 60_000, bodyIdleMs: 60_000, totalMs: 60_000, wheel });
        const run = async (count: number): Promise<void> => {
          let next = 0;
          const worker = async (): Promise<void> => {
            while (next++ < count) {
              const sample = next % 100 === 0;
              const res = await timed(`${baseUrl()}/fast`, { signal: caller.signal });
              if (sample) sampled.push(new WeakRef(res));
              expect(await res.text()).toBe('ok');
            }
          };
          await Promise.all(Array.from({ length: CONCURRENCY }, worker));
        };

        await run(WARMUP);
        await quiesce();
        const heapBefore = process.memoryUsage().heapUsed;
        sampled.length = 0;

        await run(REQUESTS);
        expect(wheel.size).toBe(0);
        expect(wheel.stats()).toMatchObject({
          pending: 0,
          scheduled: WARMUP + REQUESTS,
          fired: 0,
          cancelled: WARMUP + REQUESTS,
        });
        expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);

        await quiesce();
        const retained = process.memoryUsage().heapUsed - heapBefore;
        const alive = sampled.filter((ref) => ref.deref() !== undefined).length;
        expect(alive).toBe(0);
        expect(retained / REQUESTS).toBeLessThan(MAX_RETAINED_BYTES_PER_REQUEST);
        console.log(
          `${_name}: ${(retained / REQUESTS).toFixed(1)} bytes retained per request, ${sampled.length} sampled objects all collected`,
        );
        wheel.close();
      },
    );

    it(
      'is quiet under fan-out: 500 concurrent requests on one caller signal and inside one withDeadline, nothing kept after',
      { timeout: 60_000 },
      async () => {
        const FAN_OUT = 500;
        const wheel = new TimingWheel();
        const timed = withTimeouts(fetchFn, { headersMs: 60_000, bodyIdleMs: 60_000, totalMs: 60_000, wheel });
        const warnings: Error[] = [];
        const onWarning = (warning: Error): void => void warnings.push(warning);
        process.on('warning', onWarning);
        const caller = new AbortController();
        const sampled: Array<WeakRef<object>> = [];
        let deadlineSignal: AbortSignal | undefined;
        try {
          await withDeadline(
            60_000,
            async () => {
              deadlineSignal = currentDeadline()!.signal;
              await Promise.all(
                Array.from({ length: FAN_OUT }, async () => {
                  const res = await timed(`${baseUrl()}/fast`, { signal: caller.signal });
                  sampled.push(new WeakRef(res));
                  expect(await res.text()).toBe('ok');
                }),
              );
            },
            { wheel },
          );
          // Warnings are emitted on the next tick.
          await new Promise((resolve) => setImmediate(resolve));
        } finally {
          process.off('warning', onWarning);
        }
        expect(warnings.map((w) => w.name)).toEqual([]);
        expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
        expect(getEventListeners(deadlineSignal!, 'abort')).toHaveLength(0);
        expect(wheel.size).toBe(0);
        await quiesce();
        expect(sampled.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
        wheel.close();
      },
    );
  },
);

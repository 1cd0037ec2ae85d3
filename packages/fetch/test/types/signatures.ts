// Compiled by test/types.test.ts: the wrapped function keeps the wrapped fetch's own types.
import * as undici from 'undici';
import { TimeoutError, withTimeouts, type ResponseLike, type TimedFetch } from '../../src/index.js';

const timedGlobal = withTimeouts(fetch, { totalMs: 5_000 });
const timedUndici = withTimeouts(undici.fetch, { headersMs: 1_000 });

export async function signatures(): Promise<void> {
  const a: Response = await timedGlobal('http://127.0.0.1/', { method: 'GET', timeouts: { totalMs: 100, retry: 2 } });
  const b: Response = await timedGlobal(new Request('http://127.0.0.1/'));
  const c: Response = await timedGlobal(new URL('http://127.0.0.1/'));
  // undici's own init (dispatcher) and Response type survive.
  const d: undici.Response = await timedUndici('http://127.0.0.1/', {
    dispatcher: new undici.Agent(),
    timeouts: { bodyIdleMs: 50 },
  });
  // Usable wherever the original type is expected; Parameters/ReturnType are the original's.
  const asFetch: typeof fetch = timedGlobal;
  const asUndici: typeof undici.fetch = timedUndici;
  const params: Parameters<typeof timedGlobal> = ['http://127.0.0.1/', { method: 'POST' }];
  const result: ReturnType<typeof fetch> = timedGlobal('http://127.0.0.1/');
  const explicit: TimedFetch<typeof fetch> = timedGlobal;
  const onRetry = (error: Error | undefined, attempt: number, response: ResponseLike | undefined): string =>
    `${error instanceof TimeoutError ? error.phase : response?.status} ${attempt}`;
  withTimeouts(fetch, { retry: { onRetry } });

  // @ts-expect-error a misspelt timeout option
  await timedGlobal('http://127.0.0.1/', { timeouts: { timeout: 5 } });
  // @ts-expect-error a limit must be a number or false
  await timedGlobal('http://127.0.0.1/', { timeouts: { totalMs: '5' } });
  // @ts-expect-error fetch's own init is still checked
  await timedGlobal('http://127.0.0.1/', { method: 5 });
  // @ts-expect-error and so is its input
  await timedGlobal(42);
  // @ts-expect-error not a fetch function
  withTimeouts((x: number) => x);
  void [a, b, c, d, asFetch, asUndici, params, result, explicit];
}

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TimingWheel } from '@tickwheel/core';
import { TimeoutError } from '../../src/timeout-error.js';
import { withTimeouts } from '../../src/with-timeouts.js';
import { rejectionOf } from '../helpers/scripted-fetch.js';
import { FETCH_IMPLEMENTATIONS, type FetchImplementation } from '../helpers/fetch-implementations.js';
import { useTestServer } from '../helpers/http-server.js';

/*
 * "Your limits govern" (issue 26): undici's own per-connection headersTimeout and bodyTimeout
 * (300 s by default) are lifted for a request whose phase a wrapper limit covers, so a limit
 * longer than the dispatcher's is the one that ends the request. Reproduced at a small scale:
 * a dispatcher whose timeouts are 500 ms, a server that sends its headers, or its body's
 * chunks, 2.5 s late.
 */
const SHORT = { headersTimeout: 500, bodyTimeout: 500 } as const;
const LONG_LIMITS = { headersMs: 4_000, bodyIdleMs: 4_000, totalMs: 9_000 } as const;

type Dispatcher = { dispatch(options: unknown, handler: unknown): boolean; close(): Promise<void> };
const CURRENT = Symbol.for('undici.globalDispatcher.2');
const LEGACY = Symbol.for('undici.globalDispatcher.1');
const globals = globalThis as unknown as Record<symbol, Dispatcher | undefined>;

/**
 * The runtime's own global dispatcher replaced, as `setGlobalDispatcher` does, by an Agent of the
 * runtime's own undici (its class is the global dispatcher's) with short timeouts. Both slots are
 * set: undici 7 and 8, once imported, fill both, and each fetch reads the one of its own protocol.
 */
function useShortGlobalDispatcher(): void {
  const saved = new Map<symbol, Dispatcher>();
  let agent: Dispatcher;
  beforeAll(async () => {
    await fetch('data:,load-undici');
    for (const key of [CURRENT, LEGACY]) if (globals[key] !== undefined) saved.set(key, globals[key]);
    const Agent = (globals[CURRENT] ?? globals[LEGACY])!.constructor as new (options: object) => Dispatcher;
    agent = new Agent(SHORT);
    for (const key of saved.keys()) globals[key] = agent;
  });
  afterAll(async () => {
    for (const [key, dispatcher] of saved) globals[key] = dispatcher;
    await agent.close();
  });
}

type Get = (fetchFn: typeof globalThis.fetch, url: string) => Promise<Response>;

describe('withTimeouts and the dispatcher own timeouts', () => {
  const { base } = useTestServer();
  let wheel: TimingWheel;
  afterEach(() => {
    expect(wheel.size).toBe(0);
    wheel.close();
  });

  describe.each<[string, FetchImplementation | undefined]>([
    ['global fetch, global dispatcher', undefined],
    ...FETCH_IMPLEMENTATIONS.filter((impl) => !impl.global).map(
      (impl) => [`${impl.name}, the user's Agent`, impl] as [string, FetchImplementation],
    ),
  ])('%s with 500 ms headersTimeout and bodyTimeout', (_name, impl) => {
    const which = impl === undefined ? 'global' : 'undici';
    let fetchFn: typeof globalThis.fetch;
    let agent: Dispatcher | undefined;
    /** A GET through `fetch` (bare or wrapped), with the user's Agent as `init.dispatcher` for undici.fetch. */
    let get: Get;
    if (which === 'global') useShortGlobalDispatcher();
    beforeAll(() => {
      if (which === 'global') {
        fetchFn = globalThis.fetch;
        get = (fetch, url) => fetch(url);
      } else {
        agent = new (impl!.Agent())(SHORT);
        fetchFn = impl!.fetch;
        get = (fetch, url) => fetch(url, { dispatcher: agent } as unknown as RequestInit);
      }
    });
    afterAll(async () => {
      await agent?.close();
    });

    it('cuts bare fetch at 500 ms with its own errors (the premise)', async () => {
      wheel = new TimingWheel();
      const [headers, body] = await Promise.all([
        rejectionOf(get(fetchFn, `${base()}/slow-headers?ms=2500`)),
        get(fetchFn, `${base()}/trickle?every=2500&chunks=1&end=1`).then((res) => rejectionOf(res.text())),
      ]);
      expect(headers).toMatchObject({ cause: { code: 'UND_ERR_HEADERS_TIMEOUT' } });
      expect(body).toMatchObject({ cause: { code: 'UND_ERR_BODY_TIMEOUT' } });
    }, 15_000);

    it('lets limits longer than the dispatcher own govern: headers 2.5 s late, body chunks 2.5 s apart', async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(fetchFn, { ...LONG_LIMITS, wheel });
      const [headers, body] = await Promise.all([
        get(timed, `${base()}/slow-headers?ms=2500`).then((res) => res.text()),
        get(timed, `${base()}/trickle?every=2500&chunks=1&end=1`).then((res) => res.text()),
      ]);
      expect(headers).toBe('late');
      expect(body).toBe('c');
    }, 15_000);

    it('ends such a request with a TimeoutError when the wrapper limit says so', async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(fetchFn, { headersMs: 1_000, bodyIdleMs: 1_000, totalMs: 9_000, wheel });
      const [headers, body] = await Promise.all([
        rejectionOf(get(timed, `${base()}/slow-headers?ms=2500`)),
        get(timed, `${base()}/trickle?every=2500&chunks=1&end=1`).then((res) => rejectionOf(res.text())),
      ]);
      expect(headers).toBeInstanceOf(TimeoutError);
      expect(headers).toMatchObject({ phase: 'headers', timeoutMs: 1_000 });
      expect(body).toMatchObject({ name: 'TimeoutError', phase: 'body', timeoutMs: 1_000 });
    }, 15_000);

    it('lifts only the phase a limit covers: headersMs alone leaves bodyTimeout in place', async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(fetchFn, { headersMs: 4_000, wheel });
      const [headers, body] = await Promise.all([
        get(timed, `${base()}/slow-headers?ms=2500`).then((res) => res.text()),
        get(timed, `${base()}/trickle?every=2500&chunks=1&end=1`).then((res) => rejectionOf(res.text())),
      ]);
      expect(headers).toBe('late');
      expect(body).toMatchObject({ cause: { code: 'UND_ERR_BODY_TIMEOUT' } });
    }, 15_000);

    it("keeps the dispatcher's timeouts as the safety net when every wrapper limit is off", async () => {
      wheel = new TimingWheel();
      const timed = withTimeouts(fetchFn, { wheel });
      const error = await rejectionOf(get(timed, `${base()}/slow-headers?ms=2500`));
      expect(error).toMatchObject({ cause: { code: 'UND_ERR_HEADERS_TIMEOUT' } });
    }, 15_000);
  });
});

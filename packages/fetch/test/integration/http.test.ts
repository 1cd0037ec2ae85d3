import { TimingWheel, withDeadline } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../src/timeout-error.js';
import { withTimeouts } from '../../src/with-timeouts.js';
import { FETCH_IMPLEMENTATIONS } from '../helpers/fetch-implementations.js';
import { rejectionOf } from '../helpers/scripted-fetch.js';
import { since, useTestServer } from '../helpers/http-server.js';

// Integration tests on the system clock: limits of tens of ms, bounds generous for a noisy machine.
// undici.fetch has its own Request/Response types; the tests call each as the global fetch.
const implementations = FETCH_IMPLEMENTATIONS.map((impl) => [impl.name, impl.fetch] as const);

describe.each(implementations)('withTimeouts(%s) against node:http on 127.0.0.1', (_name, fetchFn) => {
  const { server, base: baseUrl } = useTestServer();
  let wheel: TimingWheel;
  let key = 0;

  afterEach(() => {
    // Every request released its one handle, whatever happened to it.
    expect(wheel.size).toBe(0);
    wheel.close();
  });
  const makeWheel = (): TimingWheel => (wheel = new TimingWheel());

  it('returns a fast response untouched apart from its timed body', async () => {
    const timed = withTimeouts(fetchFn, { headersMs: 1_000, bodyIdleMs: 1_000, totalMs: 2_000, wheel: makeWheel() });
    const res = await timed(`${baseUrl()}/fast`);
    expect(res.status).toBe(200);
    expect(res.url).toBe(`${baseUrl()}/fast`);
    expect(res.headers.get('content-length')).toBe('2');
    expect(await res.text()).toBe('ok');
    expect(wheel.stats().scheduled).toBe(1);
  });

  it('fires headersMs, and only it, when the headers are slow', async () => {
    const timed = withTimeouts(fetchFn, { headersMs: 50, bodyIdleMs: 20, totalMs: 2_000, wheel: makeWheel() });
    const start = performance.now();
    const error = (await rejectionOf(timed(`${baseUrl()}/slow-headers?ms=1000`))) as TimeoutError;
    const elapsed = since(start);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({
      name: 'TimeoutError',
      phase: 'headers',
      timeoutMs: 50,
      method: 'GET',
      url: `${baseUrl()}/slow-headers?ms=1000`,
    });
    expect(elapsed).toBeGreaterThanOrEqual(49);
    expect(elapsed).toBeLessThan(700);
  });

  it('fires bodyIdleMs, and only it, when a trickling body stalls', async () => {
    const timed = withTimeouts(fetchFn, { headersMs: 1_000, bodyIdleMs: 120, totalMs: 3_000, wheel: makeWheel() });
    const res = await timed(`${baseUrl()}/trickle?every=15&chunks=5&end=0`);
    const reader = res.body!.getReader();
    let received = '';
    let lastChunkAt = performance.now();
    let error: unknown;
    for (;;) {
      try {
        const { value, done } = await reader.read();
        if (done) break;
        received += new TextDecoder().decode(value);
        lastChunkAt = performance.now();
      } catch (caught) {
        error = caught;
        break;
      }
    }
    expect(received).toBe('ccccc');
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'body', timeoutMs: 120 });
    expect(since(lastChunkAt)).toBeGreaterThanOrEqual(115);
    expect(since(lastChunkAt)).toBeLessThan(1_000);
  });

  it('fires totalMs, and only it, when a body keeps trickling past it', async () => {
    const timed = withTimeouts(fetchFn, { headersMs: 200, bodyIdleMs: 200, totalMs: 250, wheel: makeWheel() });
    const start = performance.now();
    const res = await timed(`${baseUrl()}/trickle?every=10&chunks=1000&end=1`);
    const error = await rejectionOf(res.text());
    expect(error).toMatchObject({ name: 'TimeoutError', phase: 'total', timeoutMs: 250 });
    expect(since(start)).toBeGreaterThanOrEqual(245);
    expect(since(start)).toBeLessThan(1_500);
  });

  it('gives the caller reason when the caller aborts mid-body, and the server sees the client go', async () => {
    const timed = withTimeouts(fetchFn, { bodyIdleMs: 1_000, totalMs: 5_000, wheel: makeWheel() });
    const caller = new AbortController();
    const abandonedBefore = server.abandoned;
    const res = await timed(`${baseUrl()}/trickle?every=10&chunks=1000&end=1`, { signal: caller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    const reason = new Error('user navigated away');
    caller.abort(reason);
    expect(await rejectionOf(reader.read())).toBe(reason);
    await expect.poll(() => server.abandoned).toBe(abandonedBefore + 1);
  });

  it('reuses keep-alive connections after a timeout', async () => {
    const timed = withTimeouts(fetchFn, { headersMs: 500, bodyIdleMs: 60, totalMs: 2_000, wheel: makeWheel() });
    expect(await (await timed(`${baseUrl()}/fast`)).text()).toBe('ok');
    const abandonedBefore = server.abandoned;
    const stalled = await timed(`${baseUrl()}/trickle?every=5&chunks=2&end=0`);
    expect(await rejectionOf(stalled.text())).toMatchObject({ phase: 'body' });
    await rejectionOf(timed(`${baseUrl()}/slow-headers?ms=2000`, { timeouts: { headersMs: 40 } }));
    // Both timed-out exchanges were torn down on the wire, as an abort does.
    await expect.poll(() => server.abandoned).toBe(abandonedBefore + 2);
    const connectionsBefore = server.connections;
    const requestsBefore = server.requests;
    for (let i = 0; i < 20; i++) expect(await (await timed(`${baseUrl()}/fast`)).text()).toBe('ok');
    expect(server.requests - requestsBefore).toBe(20);
    // Twenty sequential requests ride on pooled keep-alive connections: undici opens a second
    // one when the next request starts before the previous socket is back in the pool (bare
    // fetch does the same), and no more.
    expect(server.connections - connectionsBefore).toBeLessThanOrEqual(2);
  });

  it('retries an idempotent request whose headers timed out, on a fresh attempt', async () => {
    const timed = withTimeouts(fetchFn, { headersMs: 60, wheel: makeWheel(), retry: { limit: 2, backoffMs: 10 } });
    const res = await timed(`${baseUrl()}/flaky?ms=2000&key=${_name}-${++key}`);
    expect(await res.text()).toBe('second time lucky');
  });

  it('does not retry a POST', async () => {
    const timed = withTimeouts(fetchFn, { headersMs: 60, wheel: makeWheel(), retry: { limit: 2, backoffMs: 10 } });
    const error = await rejectionOf(
      timed(`${baseUrl()}/flaky?ms=2000&key=${_name}-${++key}`, { method: 'POST', body: 'x' }),
    );
    expect(error).toMatchObject({ phase: 'headers', method: 'POST' });
  });

  it('is bounded by the ambient deadline', async () => {
    const timed = withTimeouts(fetchFn, { headersMs: 1_000, totalMs: 2_000, wheel: makeWheel() });
    const start = performance.now();
    const error = await rejectionOf(withDeadline(60, () => timed(`${baseUrl()}/slow-headers?ms=1000`)));
    expect(error).toMatchObject({ name: 'TimeoutError', phase: 'total' });
    expect(since(start)).toBeGreaterThanOrEqual(55);
    expect(since(start)).toBeLessThan(700);
  });

  it('rejects a spent ambient deadline without a network call', async () => {
    const timed = withTimeouts(fetchFn, { totalMs: 2_000, wheel: makeWheel() });
    const requestsBefore = server.requests;
    const error = await rejectionOf(
      withDeadline(5, async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return timed(`${baseUrl()}/fast`);
      }),
    );
    expect(error).toMatchObject({ name: 'TimeoutError', phase: 'total', timeoutMs: 0 });
    expect(server.requests).toBe(requestsBefore);
  });
});

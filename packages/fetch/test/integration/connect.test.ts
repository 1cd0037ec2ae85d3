import { TimingWheel } from '@tickwheel/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../src/timeout-error.js';
import { withTimeouts } from '../../src/with-timeouts.js';
import { FETCH_ROWS } from '../helpers/fetch-implementations.js';
import { since, useTestServer } from '../helpers/http-server.js';
import { rejectionOf } from '../helpers/scripted-fetch.js';
import { FullBacklogListener, SilentServer } from '../helpers/silent-listeners.js';

/*
 * connectMs (issue 26): DNS, TCP and TLS until a connection can carry the request, per attempt;
 * headersMs then counts from the send. System clock, bounds generous for a noisy machine.
 */
describe.each(FETCH_ROWS)('connectMs with %s', (_name, impl) => {
  const fetchFn = impl.fetch;
  const { server, base } = useTestServer();
  const silent = new SilentServer();
  const backlog = new FullBacklogListener();
  let silentPort = 0;
  let backlogPort = 0;
  let wheel: TimingWheel;
  beforeAll(async () => {
    silentPort = await silent.start();
    backlogPort = await backlog.start();
  });
  afterAll(async () => {
    backlog.stop();
    await silent.stop();
  });
  afterEach(() => {
    expect(wheel.size).toBe(0);
    wheel.close();
  });

  it('ends a TLS handshake that the server never answers with phase connect, not headers', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(fetchFn, { connectMs: 200, headersMs: 5_000, wheel });
    const start = performance.now();
    const error = await rejectionOf(timed(`https://127.0.0.1:${silentPort}/`));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'connect', timeoutMs: 200, method: 'GET' });
    expect(since(start)).toBeGreaterThanOrEqual(195);
    expect(since(start)).toBeLessThan(2_000);
  });

  it('ends a TCP connect to a listener whose backlog is full with phase connect', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(fetchFn, { connectMs: 200, totalMs: 5_000, wheel });
    const error = await rejectionOf(timed(`http://127.0.0.1:${backlogPort}/`));
    expect(error).toMatchObject({ name: 'TimeoutError', phase: 'connect', timeoutMs: 200 });
  });

  it('retries a connect timeout for any method, POST included: nothing was sent', async () => {
    wheel = new TimingWheel();
    const before = silent.connections;
    const retried: Array<[string | undefined, number]> = [];
    const timed = withTimeouts(fetchFn, {
      connectMs: 150,
      wheel,
      retry: {
        limit: 1,
        backoffMs: 10,
        onRetry: (error, attempt) => retried.push([(error as TimeoutError).phase, attempt]),
      },
    });
    const error = await rejectionOf(timed(`https://127.0.0.1:${silentPort}/`, { method: 'POST', body: 'x' }));
    expect(error).toMatchObject({ phase: 'connect' });
    expect(retried).toEqual([['connect', 1]]);
    expect(silent.connections - before).toBe(2);
  });

  it('starts headersMs at the send: a pooled connection spends nothing in connect, a slow handler is a headers timeout', async () => {
    wheel = new TimingWheel();
    const agent = impl.global ? undefined : new (impl.Agent())();
    try {
      const init = agent === undefined ? {} : ({ dispatcher: agent } as unknown as RequestInit);
      const warm = await fetchFn(`${base()}/fast`, init);
      await warm.text();
      // Let undici put the connection back in its pool.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const connections = server.connections;
      const timed = withTimeouts(fetchFn, { connectMs: 20, headersMs: 2_000, wheel });
      // 300 ms of waiting for headers on a pooled connection: far past connectMs, within headersMs.
      const res = await timed(`${base()}/slow-headers?ms=300`, init);
      expect(await res.text()).toBe('late');
      expect(server.connections).toBe(connections);
      const slow = withTimeouts(fetchFn, { connectMs: 1_000, headersMs: 100, wheel });
      expect(await rejectionOf(slow(`${base()}/slow-headers?ms=1000`, init))).toMatchObject({ phase: 'headers' });
    } finally {
      await agent?.close();
    }
  });
});

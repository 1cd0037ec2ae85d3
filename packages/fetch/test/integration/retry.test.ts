import diagnosticsChannel from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { TimingWheel, withDeadline } from '@tickwheel/core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FETCH_RETRY_CHANNEL, type FetchRetryMessage } from '../../src/channels.js';
import type { TimeoutOptions } from '../../src/types.js';
import { withTimeouts } from '../../src/with-timeouts.js';

/*
 * Retries as ky does them, each rule adapted from ky's own tests (sindresorhus/ky, test/retry.ts,
 * named per test). Differences by design: a status is never thrown (the last response is
 * returned, as fetch returns it), Retry-After delays are real but kept to 1 s, and a
 * Retry-After beyond maxRetryAfter returns the response at once (issue 26) where ky now waits
 * maxRetryAfter.
 */
type Handler = (req: http.IncomingMessage, res: http.ServerResponse, count: number) => void;

const fixture = 'fixture';
const defaultRetryCount = 2;

describe('retries against node:http (ky test/retry.ts)', () => {
  let handler: Handler;
  let count = 0;
  let closedEarly = 0;
  let base = '';
  let wheel: TimingWheel;
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    count++;
    res.on('close', () => {
      if (!res.writableFinished) closedEarly++;
    });
    req.resume();
    req.on('end', () => handler(req, res, count));
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    count = 0;
    closedEarly = 0;
    wheel = new TimingWheel();
  });
  afterEach(() => {
    expect(wheel.size).toBe(0);
    wheel.close();
  });

  /** fetch with retries (fast backoff unless the test sets its own) on the test's wheel. */
  const timed = (retry: TimeoutOptions['retry'], more: TimeoutOptions = {}): typeof fetch =>
    withTimeouts(fetch, {
      ...more,
      wheel,
      retry: typeof retry === 'object' ? { backoffMs: 10, ...retry } : { backoffMs: 10, limit: retry as number },
    });

  /** The retry channel's messages while `fn` runs. */
  async function retries<T>(fn: () => Promise<T>): Promise<{ result: T; messages: FetchRetryMessage[] }> {
    const messages: FetchRetryMessage[] = [];
    const listener = (message: unknown): void => void messages.push(message as FetchRetryMessage);
    diagnosticsChannel.subscribe(FETCH_RETRY_CHANNEL, listener);
    try {
      return { result: await fn(), messages };
    } finally {
      diagnosticsChannel.unsubscribe(FETCH_RETRY_CHANNEL, listener);
    }
  }

  it('ky "network error": retries network errors when asked (retryOnNetworkError)', async () => {
    handler = (req, res, n) => (n === defaultRetryCount + 1 ? res.end(fixture) : req.socket.destroy());
    const res = await timed({ limit: 2, retryOnNetworkError: true })(base);
    expect(await res.text()).toBe(fixture);
    expect(count).toBe(defaultRetryCount + 1);
  });

  it('does not retry network errors unless asked', async () => {
    handler = (req) => req.socket.destroy();
    await expect(timed(2)(base)).rejects.toThrow('fetch failed');
    expect(count).toBe(1);
  });

  it('ky "status code 500"', async () => {
    handler = (_req, res, n) => (n === defaultRetryCount + 1 ? res.end(fixture) : ((res.statusCode = 500), res.end()));
    expect(await (await timed(2)(base)).text()).toBe(fixture);
    expect(count).toBe(defaultRetryCount + 1);
  });

  it('ky "only on defined status codes": a 400 is the answer, returned, not thrown', async () => {
    handler = (_req, res) => ((res.statusCode = 400), res.end('bad'));
    const res = await timed(2)(base);
    expect(res.status).toBe(400);
    expect(await res.text()).toBe('bad');
    expect(count).toBe(1);
  });

  it('ky "not on POST"', async () => {
    handler = (_req, res) => ((res.statusCode = 500), res.end());
    expect((await timed(2)(base, { method: 'POST', body: 'x' })).status).toBe(500);
    expect(count).toBe(1);
  });

  it('ky "respect Retry-After: 0 and retry immediately"', async () => {
    handler = (_req, res, n) => (n === 5 ? res.end(fixture) : (res.writeHead(413, { 'Retry-After': 0 }), res.end()));
    const start = performance.now();
    expect(await (await timed({ limit: 4, backoffMs: 5_000 })(base)).text()).toBe(fixture);
    expect(count).toBe(5);
    expect(performance.now() - start).toBeLessThan(2_000);
  });

  it('ky "respect 413 Retry-After" (seconds)', async () => {
    handler = (_req, res, n) => (n === 2 ? res.end(fixture) : (res.writeHead(413, { 'Retry-After': 1 }), res.end()));
    const start = performance.now();
    expect(await (await timed(1)(base)).text()).toBe(fixture);
    expect(performance.now() - start).toBeGreaterThanOrEqual(990);
    expect(count).toBe(2);
  });

  it('ky "respect 413 Retry-After with HTTP date"', async () => {
    handler = (_req, res, n) => {
      if (n === 2) return void res.end(fixture);
      // Rounded up to the next second, as HTTP dates have second resolution.
      res.writeHead(413, { 'Retry-After': new Date(Date.now() + 2_000).toUTCString() });
      res.end();
    };
    const start = performance.now();
    expect(await (await timed(1)(base)).text()).toBe(fixture);
    expect(performance.now() - start).toBeGreaterThanOrEqual(900);
    expect(count).toBe(2);
  }, 10_000);

  it('ky "doesn\'t retry on 413 without Retry-After header"', async () => {
    handler = (_req, res) => ((res.statusCode = 413), res.end());
    expect((await timed(2)(base)).status).toBe(413);
    expect(count).toBe(1);
  });

  it('ky "respect custom `afterStatusCodes` (500) with Retry-After header"', async () => {
    handler = (_req, res, n) => (n === 2 ? res.end(fixture) : (res.writeHead(500, { 'Retry-After': 1 }), res.end()));
    const { messages } = await retries(async () => (await timed({ limit: 1, afterStatusCodes: [500] })(base)).text());
    expect(messages.map((m) => [m.status, m.delayMs])).toEqual([[500, 1_000]]);
  });

  it('ky "custom `afterStatusCodes` does not retry statuses missing from `statusCodes`"', async () => {
    handler = (_req, res) => (res.writeHead(400, { 'Retry-After': 1 }), res.end());
    expect((await timed({ limit: 2, afterStatusCodes: [400] })(base)).status).toBe(400);
    expect(count).toBe(1);
  });

  it('ky "respect number of retries": the last 408 is returned', async () => {
    handler = (_req, res) => ((res.statusCode = 408), res.end('timeout'));
    const res = await timed({ limit: 3 })(base);
    expect(res.status).toBe(408);
    expect(await res.text()).toBe('timeout');
    expect(count).toBe(4);
  });

  it('ky "respect retry methods"', async () => {
    handler = (_req, res) => ((res.statusCode = 408), res.end());
    expect((await timed({ limit: 3, methods: ['get'] })(base, { method: 'POST', body: 'x' })).status).toBe(408);
    expect(count).toBe(1);
    count = 0;
    expect((await timed({ limit: 2, methods: ['get'] })(base)).status).toBe(408);
    expect(count).toBe(defaultRetryCount + 1);
  });

  it('ky "respect maxRetryAfter": a Retry-After beyond it is not waited for, the response returned at once', async () => {
    handler = (_req, res, n) => (n === 2 ? res.end(fixture) : (res.writeHead(413, { 'Retry-After': 1 }), res.end()));
    const start = performance.now();
    const res = await timed({ limit: 4, maxRetryAfter: 420 })(base);
    expect(res.status).toBe(413);
    expect(performance.now() - start).toBeLessThan(900);
    expect(count).toBe(1);
    count = 0;
    expect(await (await timed({ limit: 4, maxRetryAfter: 2_000 })(base)).text()).toBe(fixture);
    expect(count).toBe(2);
  });

  it('ky "RateLimit-Reset delay seconds are respected like Retry-After"', async () => {
    handler = (_req, res, n) =>
      n === 2 ? res.end(fixture) : (res.writeHead(429, { 'RateLimit-Reset': 1 }), res.end());
    const { messages } = await retries(async () => (await timed(1)(base)).text());
    expect(messages.map((m) => m.delayMs)).toEqual([1_000]);
  });

  it('ky "invalid Retry-After header falls back to retry delay"', async () => {
    handler = (_req, res, n) =>
      n === 2 ? res.end(fixture) : (res.writeHead(429, { 'Retry-After': 'not-a-valid-value' }), res.end());
    const { messages } = await retries(async () =>
      (await timed({ limit: 1, backoffMs: 50, maxRetryAfter: 10 })(base)).text(),
    );
    expect(messages.map((m) => m.delayMs)).toEqual([50]);
  });

  it('ky "respect maximum backoffLimit" and "jitter respects backoffLimit"', async () => {
    handler = (_req, res) => ((res.statusCode = 500), res.end());
    const { messages } = await retries(() =>
      timed({ limit: 4, backoffMs: 20, backoffFactor: 2, backoffLimit: 50, jitter: (delay) => delay * 2 })(base),
    );
    expect(messages.map((m) => m.delayMs)).toEqual([40, 50, 50, 50]);
  });

  it('ky "jitter is not applied when Retry-After header is present"', async () => {
    handler = (_req, res, n) => (n === 2 ? res.end(fixture) : (res.writeHead(503, { 'Retry-After': 1 }), res.end()));
    const { messages } = await retries(async () => (await timed({ limit: 1, jitter: () => 5 })(base)).text());
    expect(messages.map((m) => m.delayMs)).toEqual([1_000]);
  });

  it('ky "Retry-After delay is bounded by totalTimeout budget": retry.budgetMs and the ambient deadline', async () => {
    handler = (_req, res) => (res.writeHead(503, { 'Retry-After': 2 }), res.end('busy'));
    const start = performance.now();
    expect((await timed({ limit: 2, budgetMs: 500 })(base)).status).toBe(503);
    const inDeadline = await withDeadline(500, () => timed(2)(base));
    expect(inDeadline.status).toBe(503);
    expect(await inDeadline.text()).toBe('busy');
    expect(performance.now() - start).toBeLessThan(1_500);
    expect(count).toBe(2);
  });

  it('ky "doesn\'t retry when retry.limit is set to 0"', async () => {
    handler = (_req, res) => ((res.statusCode = 503), res.end());
    expect((await timed(0, { totalMs: 5_000 })(base)).status).toBe(503);
    expect(count).toBe(1);
  });

  it('cancels the body of a retried response, so that nothing leaks', async () => {
    handler = (_req, res, n) => {
      if (n === 2) return void res.end(fixture);
      // A 503 whose body never ends: only a client that lets go of it closes it.
      res.writeHead(503, { 'Retry-After': 0 });
      res.write('partial');
    };
    expect(await (await timed(1)(base)).text()).toBe(fixture);
    await expect.poll(() => closedEarly, { timeout: 2_000 }).toBe(1);
  });

  it('calls onRetry with the response for a retried status', async () => {
    handler = (_req, res, n) => (n === 2 ? res.end(fixture) : ((res.statusCode = 502), res.end()));
    const seen: unknown[] = [];
    const fetchFn = timed({
      limit: 1,
      onRetry: (error, attempt, response) => seen.push([error, attempt, response?.status]),
    });
    expect(await (await fetchFn(base)).text()).toBe(fixture);
    expect(seen).toEqual([[undefined, 1, 502]]);
  });
});

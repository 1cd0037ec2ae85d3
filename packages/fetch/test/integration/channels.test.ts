import { AsyncLocalStorage } from 'node:async_hooks';
import diagnosticsChannel from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CORE_CAPTURE_CONTEXT_CHANNEL, type ContextCarrier } from '@tickwheel/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  FETCH_RETRY_CHANNEL,
  FETCH_TIMEOUT_CHANNEL,
  TimeoutError,
  withTimeouts,
  type FetchRetryMessage,
  type FetchTimeoutMessage,
} from '../../src/index.js';

/** `/stall` never answers; `/stall-body` sends headers and one chunk, then nothing; `/no-read` never reads a request body. */
let server: http.Server;
let origin: string;
const store = new AsyncLocalStorage<string>();
const stops: Array<() => void> = [];

function listen<T extends { context: unknown }>(name: string): Array<{ message: T; context: unknown }> {
  const seen: Array<{ message: T; context: unknown }> = [];
  const listener = (message: unknown) => seen.push({ message: message as T, context: (message as T).context });
  diagnosticsChannel.subscribe(name, listener);
  stops.push(() => diagnosticsChannel.unsubscribe(name, listener));
  return seen;
}

/** A capture-context subscriber, as the OpenTelemetry bridge is: it stores the caller's store value. */
function captureStore(): void {
  const capture = (carrier: unknown) => {
    (carrier as ContextCarrier).context = store.getStore();
  };
  diagnosticsChannel.subscribe(CORE_CAPTURE_CONTEXT_CHANNEL, capture);
  stops.push(() => diagnosticsChannel.unsubscribe(CORE_CAPTURE_CONTEXT_CHANNEL, capture));
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/no-read') req.pause();
    if (req.url === '/stall-body') {
      res.writeHead(200);
      res.write('first');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('channels, published by withTimeouts against a real node:http server', () => {
  it(
    'publishes every timed-out attempt and every retry, with the context of the fetch() call',
    { timeout: 10_000 },
    async () => {
      const timeouts = listen<FetchTimeoutMessage>(FETCH_TIMEOUT_CHANNEL);
      const retries = listen<FetchRetryMessage>(FETCH_RETRY_CHANNEL);
      captureStore();
      const timedFetch = withTimeouts(fetch, { headersMs: 50, retry: { limit: 1, backoffMs: 10 } });
      const error = await store.run('request 1', () => timedFetch(`${origin}/stall?secret=1`).catch((e: unknown) => e));
      expect(error).toBeInstanceOf(TimeoutError);

      expect(
        timeouts.map(({ message, context }) => [
          message.phase,
          message.method,
          message.origin,
          message.limitMs,
          message.attempt,
          context,
        ]),
      ).toEqual([
        ['headers', 'GET', origin, 50, 0, 'request 1'],
        ['headers', 'GET', origin, 50, 1, 'request 1'],
      ]);
      for (const { message } of timeouts) {
        expect(message.elapsedMs).toBeGreaterThanOrEqual(50);
        expect(message.elapsedMs).toBeLessThan(1_000);
      }
      expect(timeouts[1].message.error).toBe(error);
      expect(
        retries.map(({ message, context }) => [
          message.method,
          message.origin,
          message.attempt,
          message.delayMs,
          context,
        ]),
      ).toEqual([['GET', origin, 1, 10, 'request 1']]);
      expect(retries[0].message.error).toBe(timeouts[0].message.error);
    },
  );

  it('publishes a body timeout with its phase', { timeout: 10_000 }, async () => {
    const timeouts = listen<FetchTimeoutMessage>(FETCH_TIMEOUT_CHANNEL);
    const timedFetch = withTimeouts(fetch, { bodyIdleMs: 50 });
    const res = await timedFetch(`${origin}/stall-body`, { method: 'POST', body: 'x' });
    await expect(res.text()).rejects.toBeInstanceOf(TimeoutError);
    expect(timeouts.map(({ message }) => [message.phase, message.method, message.limitMs, message.attempt])).toEqual([
      ['body', 'POST', 50, 0],
    ]);
  });

  it('publishes an upload timeout with its phase', { timeout: 15_000 }, async () => {
    const timeouts = listen<FetchTimeoutMessage>(FETCH_TIMEOUT_CHANNEL);
    const timedFetch = withTimeouts(fetch, { uploadIdleMs: 100 });
    // More than the socket buffers of both ends take in: the upload stalls.
    const body = Buffer.alloc(24 * 1024 * 1024, 1);
    await expect(timedFetch(`${origin}/no-read`, { method: 'PUT', body })).rejects.toBeInstanceOf(TimeoutError);
    expect(timeouts.map(({ message }) => [message.phase, message.method, message.limitMs, message.attempt])).toEqual([
      ['upload', 'PUT', 100, 0],
    ]);
  });

  it('publishes nothing for a request that completes', { timeout: 10_000 }, async () => {
    const timeouts = listen<FetchTimeoutMessage>(FETCH_TIMEOUT_CHANNEL);
    const timedFetch = withTimeouts(fetch, { headersMs: 1_000 });
    const res = await timedFetch(`${origin}/stall-body`, { timeouts: { bodyIdleMs: 0 } });
    await res.body?.cancel();
    expect(timeouts).toEqual([]);
  });
});

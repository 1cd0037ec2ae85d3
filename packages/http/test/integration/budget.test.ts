/**
 * Where a request's time went, across two hops on loopback: the handler deadline's source
 * (`defaultTimeoutMs`, `maxTimeoutMs`, `timeoutFor`, the caller's `connect-timeout-ms` or
 * `grpc-timeout` header, an express route's `timeoutMs`) reaches the fetch and the gRPC call the
 * handler makes, whose timeouts name it; and the controller's 'timeout' event carries the budget
 * while the 503 stays short.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Server, ServerCredentials, credentials, status, type ServiceError } from '@grpc/grpc-js';
import type { TimeoutBudget } from '@tickwheel/core';
import { TimeoutError, withTimeouts } from '@tickwheel/fetch';
import { deadlineInterceptor } from '@tickwheel/grpc';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { deadline } from '../../src/express.js';
import { serverTimeouts, type TimeoutEvent } from '../../src/index.js';
import { loopback } from '../helpers/loopback.js';

const net = loopback();
const same = (value: Buffer): Buffer => value;
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A downstream HTTP service that never answers. */
async function silentService(): Promise<string> {
  const server = http.createServer(() => undefined);
  const port = await net.listen(server);
  return `http://127.0.0.1:${port}/`;
}

/** A gRPC client of a service whose one method never answers. */
async function silentGrpc(): Promise<Client> {
  const server = new Server();
  server.addService(
    {
      Wait: {
        path: '/test.Silent/Wait',
        requestStream: false,
        responseStream: false,
        requestSerialize: same,
        requestDeserialize: same,
        responseSerialize: same,
        responseDeserialize: same,
      },
    },
    { Wait: () => undefined },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  cleanups.push(() => server.forceShutdown());
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), {
    interceptors: [deadlineInterceptor()],
  });
  cleanups.push(() => client.close());
  return client;
}

function callSilent(client: Client): Promise<ServiceError> {
  return new Promise((resolve) =>
    client.makeUnaryRequest('/test.Silent/Wait', same, same, Buffer.from(''), (error) => resolve(error!)),
  );
}

/** GET `path` on `port` with `headers`; resolves with the status and body. */
function get(port: number, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/', headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
      .on('error', reject);
  });
}

/** A server whose handler waits `spendMs`, then runs `call`, whose rejection it keeps. */
async function handlerServer(
  options: Parameters<typeof serverTimeouts>[1],
  spendMs: number,
  call: () => Promise<unknown>,
): Promise<{ port: number; failure: () => Promise<unknown>; events: TimeoutEvent[] }> {
  let failure!: Promise<unknown>;
  const server = http.createServer(() => {
    failure = sleep(spendMs)
      .then(call)
      .then(
        () => undefined,
        (error: unknown) => error,
      );
  });
  const timeouts = serverTimeouts(server, options);
  const events: TimeoutEvent[] = [];
  timeouts.on('timeout', (event) => events.push(event));
  cleanups.push(() => timeouts.stop());
  const port = await net.listen(server);
  return { port, failure: () => failure, events };
}

describe('the budget across two hops', () => {
  it("HTTP handler -> fetch: the caller's connect-timeout-ms is the source, and what the handler spent before is counted", async () => {
    const url = await silentService();
    const timedFetch = withTimeouts(fetch, { totalMs: 10_000 });
    const { port, failure } = await handlerServer({ defaultTimeoutMs: 10_000 }, 100, () => timedFetch(url));
    const answer = await get(port, { 'connect-timeout-ms': '400' });
    expect(answer.status).toBe(503);
    const error = (await failure()) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    const budget = error.budget!;
    expect(budget).toMatchObject({
      limit: 'deadline',
      inherited: true,
      source: 'header:connect-timeout-ms',
      budgetMs: 400,
    });
    expect(budget.spentBeforeMs).toBeGreaterThanOrEqual(99);
    expect(budget.spentBeforeMs + budget.elapsedMs).toBeGreaterThanOrEqual(399);
    expect(error.message).toMatch(
      /; the deadline of 400 ms from header:connect-timeout-ms: \d+ ms spent before this call, \d+ ms in it/,
    );
  });

  it("HTTP handler -> gRPC: the caller's grpc-timeout is the source of the gRPC call's DEADLINE_EXCEEDED", async () => {
    const client = await silentGrpc();
    const { port, failure } = await handlerServer({}, 50, () => callSilent(client).then((e) => Promise.reject(e)));
    await get(port, { 'grpc-timeout': '300m' });
    const error = (await failure()) as ServiceError & { budget?: TimeoutBudget };
    expect(error.code).toBe(status.DEADLINE_EXCEEDED);
    expect(error.budget).toMatchObject({
      limit: 'deadline',
      inherited: true,
      source: 'header:grpc-timeout',
      budgetMs: 300,
    });
    expect(error.budget!.spentBeforeMs).toBeGreaterThanOrEqual(49);
    expect(error.details).toMatch(/; the deadline of 300 ms from header:grpc-timeout: \d+ ms spent before this call/);
  });

  it("the server's own limits are sources too: defaultTimeoutMs, maxTimeoutMs when it shortened the caller's, timeoutFor", async () => {
    const url = await silentService();
    const timedFetch = withTimeouts(fetch, { totalMs: 10_000 });
    const sources: Array<string | undefined> = [];
    for (const [options, headers] of [
      [{ defaultTimeoutMs: 150 }, {}],
      [{ maxTimeoutMs: 150 }, { 'connect-timeout-ms': '5000' }],
      [{ defaultTimeoutMs: 10_000, timeoutFor: () => 150 }, {}],
    ] as const) {
      const { port, failure, events } = await handlerServer(options, 0, () => timedFetch(url));
      const answer = await get(port, headers);
      // The answer stays as short as ever: nothing of the budget goes to the client.
      expect(answer).toEqual({ status: 503, body: "Service Unavailable: the request's deadline passed\n" });
      const budget = ((await failure()) as TimeoutError).budget!;
      expect(budget).toMatchObject({ limit: 'deadline', inherited: true, budgetMs: 150 });
      expect(budget.spentBeforeMs).toBeLessThan(50);
      sources.push(budget.source);
      // The server's own report: its own limit, not an inherited one.
      expect(events[0].budget).toMatchObject({ limit: budget.source, inherited: false, budgetMs: 150 });
      expect(events[0].budget!.elapsedMs).toBeGreaterThanOrEqual(150);
    }
    expect(sources).toEqual(['defaultTimeoutMs', 'maxTimeoutMs', 'timeoutFor']);
  });

  it("an express route's timeoutMs is the source its handler's calls name", async () => {
    const url = await silentService();
    const timedFetch = withTimeouts(fetch, { totalMs: 10_000 });
    let failure!: Promise<unknown>;
    const app = express();
    app.get('/', deadline({ timeoutMs: 150 }), () => {
      failure = timedFetch(url).catch((error: unknown) => error);
    });
    const port = await net.listen(http.createServer(app));
    expect((await get(port)).status).toBe(503);
    expect(((await failure) as TimeoutError).budget).toMatchObject({ source: 'timeoutMs', budgetMs: 150 });
  });
});

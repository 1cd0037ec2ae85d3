import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { sharedWheel } from '@tickwheel/core';
import { TimeoutError, withTimeouts } from '@tickwheel/fetch';
import { deadlineInterceptor, serverDeadlineInterceptor } from '@tickwheel/grpc';
import { serverTimeouts } from '@tickwheel/http';
import { RedisTimers } from '@tickwheel/redis';
import { Redis } from 'ioredis';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../../../redis/test/helpers/redis-server.js';
import { METRICS, TIMEOUT_EVENT } from '../../src/index.js';
import { expectOneWsTimeout, heartbeatServer, instrumentedSuite, SLOW_SERVICE } from '../helpers/real-servers.js';
import { histogram, type Telemetry } from '../helpers/telemetry.js';

/**
 * The bridge end to end: real servers on 127.0.0.1, the adapters timing real requests out, and
 * the real OpenTelemetry SDK (sdk-metrics with its in-memory exporter, sdk-trace-base) recording
 * what the channels published. Each test asserts the recorded values.
 */
const suite = instrumentedSuite();
const { cleanups } = suite;
let telemetry: Telemetry;
beforeAll(() => {
  telemetry = suite.telemetry;
});

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return (server.address() as AddressInfo).port;
}

describe('instrumentTickwheel with the real SDK, against real servers', () => {
  it('records an upload a node:http server stopped reading under phase upload', { timeout: 15_000 }, async () => {
    // Reads nothing: the socket buffers fill, then the 24 MiB body stalls.
    const port = await listen(http.createServer((req) => req.pause()));
    const timedFetch = withTimeouts(fetch, { uploadIdleMs: 100, totalMs: 10_000 });
    const body = Buffer.alloc(24 * 1024 * 1024, 1);
    const error = await timedFetch(`http://127.0.0.1:${port}/upload`, { method: 'POST', body }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'TimeoutError', phase: 'upload' });
    const attributes = {
      'tickwheel.package': 'fetch',
      'tickwheel.phase': 'upload',
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      'server.port': port,
      'url.scheme': 'http',
    };
    expect((await telemetry.point(METRICS.timeouts, attributes)).value).toBe(1);
  });

  it(
    'records a fetch that stalls on a node:http server: two timed-out attempts, one retry, a span event',
    { timeout: 15_000 },
    async () => {
      const port = await listen(http.createServer(() => {})); // never answers
      const timedFetch = withTimeouts(fetch, { headersMs: 80, retry: { limit: 1, backoffMs: 10 } });
      const error = await telemetry.inSpan('checkout', async (span) => {
        const result = await timedFetch(`http://127.0.0.1:${port}/checkout`).catch((e: unknown) => e);
        span.end();
        return result;
      });
      expect(error).toBeInstanceOf(TimeoutError);

      const attributes = {
        'tickwheel.package': 'fetch',
        'tickwheel.phase': 'headers',
        'http.request.method': 'GET',
        'server.address': '127.0.0.1',
        'server.port': port,
        'url.scheme': 'http',
      };
      expect((await telemetry.point(METRICS.timeouts, attributes)).value).toBe(2);
      const elapsed = histogram(await telemetry.point(METRICS.timeoutElapsed, attributes));
      expect(elapsed.count).toBe(2);
      expect(elapsed.min).toBeGreaterThanOrEqual(0.08);
      expect(elapsed.max).toBeLessThan(1);
      expect((await telemetry.point(METRICS.fetchRetries, { 'server.port': port })).value).toBe(1);

      const span = telemetry.finishedSpans().find((s) => s.name === 'checkout')!;
      expect(
        span.events.map((e) => [
          e.name,
          e.attributes?.['tickwheel.phase'],
          e.attributes?.['tickwheel.attempt'],
          e.attributes?.['tickwheel.limit_ms'],
        ]),
      ).toEqual([
        [TIMEOUT_EVENT, 'headers', 0, 80],
        [TIMEOUT_EVENT, 'headers', 1, 80],
      ]);
    },
  );

  it('records a gRPC call past its deadline on real grpc-js, on both sides', { timeout: 15_000 }, async () => {
    const service = SLOW_SERVICE;
    const server = new grpc.Server({ interceptors: [serverDeadlineInterceptor({ maxTimeoutMs: 100 })] });
    server.addService(service, { wait: () => {} }); // never answers: the server's cap ends it
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
        err ? reject(err) : resolve(bound),
      ),
    );
    cleanups.push(() => server.forceShutdown());
    const Client = grpc.makeGenericClientConstructor(service, 'Slow');
    const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
      interceptors: [deadlineInterceptor({ timeoutMs: 2_000 })],
    });
    cleanups.push(() => client.close());
    const callWait = (options: grpc.CallOptions) =>
      new Promise<grpc.ServiceError | null>((resolve) =>
        client.makeUnaryRequest(
          service.wait.path,
          service.wait.requestSerialize,
          service.wait.responseDeserialize,
          {},
          options,
          (err) => resolve(err),
        ),
      );

    // The server's 100 ms cap ends the first call; the caller's own 50 ms deadline ends the second.
    expect((await callWait({}))?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect((await callWait({ deadline: Date.now() + 50 }))?.code).toBe(grpc.status.DEADLINE_EXCEEDED);

    const rpc = { 'rpc.system': 'grpc', 'rpc.service': 'demo.Slow', 'rpc.method': 'Wait' };
    const server100 = {
      ...rpc,
      'tickwheel.package': 'grpc',
      'tickwheel.side': 'server',
      'tickwheel.phase': 'max',
      'tickwheel.propagated': false,
    };
    expect((await telemetry.point(METRICS.timeouts, server100)).value).toBe(1);
    const serverElapsed = histogram(await telemetry.point(METRICS.timeoutElapsed, server100));
    expect(serverElapsed.sum).toBeGreaterThanOrEqual(0.1);
    expect(serverElapsed.sum).toBeLessThan(1);
    const client50 = { ...rpc, 'tickwheel.side': 'client', 'tickwheel.phase': 'explicit' };
    expect((await telemetry.point(METRICS.timeouts, client50)).value).toBe(1);
    expect(histogram(await telemetry.point(METRICS.timeoutElapsed, client50)).sum).toBeGreaterThanOrEqual(0.04);
    // One handler abort per call: the cap's, and for the second call either its propagated deadline
    // on the server or the client's cancel, whichever reached the handler first.
    const aborts = (await telemetry.points(METRICS.grpcHandlerAborts)).filter(
      (p) => p.attributes['rpc.method'] === 'Wait',
    );
    expect(aborts.reduce((sum, p) => sum + (p.value as number), 0)).toBe(2);
    expect(aborts.find((p) => p.attributes['tickwheel.reason'] === 'deadline')?.value).toBeGreaterThanOrEqual(1);
  });

  it(
    'records the limits of serverTimeouts on a real node:http server: a handler deadline and a request head that never ends',
    { timeout: 15_000 },
    async () => {
      const server = http.createServer(() => {}); // never answers: the handler deadline ends each request
      const timeouts = serverTimeouts(server, { defaultTimeoutMs: 80, headersMs: 400 });
      cleanups.push(() => timeouts.stop());
      const port = await listen(server);

      const res = await fetch(`http://127.0.0.1:${port}/slow`, { headers: { 'connect-timeout-ms': '60' } });
      expect(res.status).toBe(503);
      await res.text();
      const late = await fetch(`http://127.0.0.1:${port}/slow`);
      expect(late.status).toBe(503);
      await late.text();
      // A head that never ends: 408 and the connection closed, headersMs after it opened.
      const answer = await new Promise<string>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n'));
        cleanups.push(() => socket.destroy());
        let received = '';
        socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
        socket.on('close', () => resolve(received));
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);

      const server503 = { 'tickwheel.package': 'http', 'tickwheel.side': 'server', 'tickwheel.phase': 'handler' };
      const propagated = { ...server503, 'tickwheel.outcome': 'answered', 'tickwheel.propagated': true };
      expect((await telemetry.point(METRICS.timeouts, propagated)).value).toBe(1);
      expect(histogram(await telemetry.point(METRICS.timeoutElapsed, propagated)).sum).toBeCloseTo(0.06, 9);
      const own = { ...server503, 'tickwheel.outcome': 'answered', 'tickwheel.propagated': false };
      expect((await telemetry.point(METRICS.timeouts, own)).value).toBe(1);
      expect(histogram(await telemetry.point(METRICS.timeoutElapsed, own)).sum).toBeCloseTo(0.08, 9);
      const head = { 'tickwheel.package': 'http', 'tickwheel.phase': 'headers', 'tickwheel.outcome': 'answered' };
      expect((await telemetry.point(METRICS.timeouts, head)).value).toBe(1);
      expect(histogram(await telemetry.point(METRICS.timeoutElapsed, head)).sum).toBeCloseTo(0.4, 9);
    },
  );

  it('records a mute WebSocket client terminated by the heartbeat on real ws', { timeout: 15_000 }, async () => {
    const { beat, url } = await heartbeatServer(cleanups, { pingIntervalMs: 60, pongTimeoutMs: 60 });
    const dead = new Promise<number>((resolve) => beat.once('dead', ({ waitedMs }) => resolve(waitedMs)));
    const mute = new WebSocket(url, { autoPong: false });
    cleanups.push(() => mute.terminate());
    await expectOneWsTimeout(telemetry, 'pong-timeout', await dead, 60);
  });

  it(
    'records an idle connection the heartbeat closed (closeOnIdle) on real ws, by idle kind',
    { timeout: 15_000 },
    async () => {
      // No pings: the server writes nothing, so its writer goes idle and the heartbeat closes it.
      const { beat, url } = await heartbeatServer(cleanups, { pingIntervalMs: 0, writerIdleMs: 80, closeOnIdle: true });
      const idle = new Promise<number>((resolve) => beat.once('idle', ({ idleMs }) => resolve(idleMs)));
      const client = new WebSocket(url);
      cleanups.push(() => client.terminate());
      const closed = new Promise<[number, string]>((resolve) =>
        client.once('close', (code, reason) => resolve([code, reason.toString()])),
      );
      const idleMs = await idle;
      expect(await closed).toEqual([1000, 'idle timeout']);
      await expectOneWsTimeout(telemetry, 'idle-writer', idleMs, 80);
    },
  );

  describe('Redis', () => {
    let redisServer: RedisServer;
    beforeAll(async () => {
      redisServer = await startRedisServer();
    }, 30_000);
    afterAll(() => redisServer?.stop());

    it('records the lateness of a Redis timer on the server clock, and a lost lease', { timeout: 15_000 }, async () => {
      const redis = new Redis(redisServer.url);
      const timers = new RedisTimers({ redis, namespace: 'otel-test', leaseMs: 100, pollIntervalMs: 50 });
      cleanups.push(async () => {
        await timers.stop();
        redis.disconnect();
      });
      const done: number[] = [];
      await timers.schedule('buff', 30);
      let deliveries = 0;
      await timers.start(async ({ attempts }) => {
        if (++deliveries === 1) await new Promise((resolve) => setTimeout(resolve, 500)); // outlives its 100 ms lease
        done.push(attempts);
      });
      const until = Date.now() + 10_000;
      while ((await telemetry.points(METRICS.redisLeasesLost)).length === 0 && Date.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 20));

      const lateness = histogram(
        await telemetry.point(METRICS.redisLateness, { 'tickwheel.redis.namespace': 'otel-test' }),
      );
      expect(lateness.count).toBe(2); // the first delivery, and the second after its lease
      expect(lateness.min).toBeGreaterThanOrEqual(0);
      expect(lateness.min).toBeLessThan(0.5);
      expect(
        (
          await telemetry.point(METRICS.redisLeasesLost, {
            'tickwheel.redis.namespace': 'otel-test',
            'tickwheel.redis.stage': 'ack',
          })
        ).value,
      ).toBe(1);
      expect(done).toEqual([1, 1]); // the redelivery finishes first; a stall keeps its attempt
    });
  });

  it(
    "records the shared wheel's wake-ups, the timers they fired, and its pending timers",
    { timeout: 15_000 },
    async () => {
      const before = await telemetry.points(METRICS.wheelFired);
      const firedBefore = before.length === 0 ? 0 : (before[0].value as number);
      await Promise.all(
        [5, 10, 15].map((ms) => new Promise<void>((resolve) => sharedWheel().schedule(ms, () => resolve()))),
      );
      const fired = (await telemetry.point(METRICS.wheelFired)).value as number;
      expect(fired - firedBefore).toBeGreaterThanOrEqual(3);
      const lateness = histogram(await telemetry.point(METRICS.wheelLateness));
      expect(lateness.count).toBeGreaterThanOrEqual(1);
      expect(lateness.min).toBeGreaterThanOrEqual(0);
      const handle = sharedWheel()
        .schedule(60_000, () => {})
        .unref();
      expect((await telemetry.point(METRICS.wheelPending, { 'tickwheel.wheel': 'shared' })).value).toBe(
        sharedWheel().size,
      );
      handle.cancel();
    },
  );
});

import diagnosticsChannel from 'node:diagnostics_channel';
import { context, trace, type Context } from '@opentelemetry/api';
import {
  captureContext,
  CORE_CALLBACK_ERROR_CHANNEL,
  CORE_CAPTURE_CONTEXT_CHANNEL,
  CORE_TIMER_SET_EXPIRE_CHANNEL,
  CORE_WAKE_CHANNEL,
  ManualClock,
  TimingWheel,
  type CallbackErrorMessage,
  type TimerSetExpireMessage,
  type WheelWakeMessage,
} from '@tickwheel/core';
import { FETCH_RETRY_CHANNEL, FETCH_TIMEOUT_CHANNEL, type FetchRetryMessage } from '@tickwheel/fetch';
import {
  GRPC_DEADLINE_CHANNEL,
  GRPC_HANDLER_ABORT_CHANNEL,
  type GrpcDeadlineMessage,
  type GrpcHandlerAbortMessage,
} from '@tickwheel/grpc';
import {
  REDIS_DUPLICATE_CHANNEL,
  REDIS_FIRED_CHANNEL,
  REDIS_LEASE_LOST_CHANNEL,
  type RedisFiredMessage,
} from '@tickwheel/redis';
import {
  HTTP_EVENT_STREAM_END_CHANNEL,
  HTTP_TIMEOUT_CHANNEL,
  type HttpEventStreamEndMessage,
  type HttpTimeoutMessage,
} from '@tickwheel/http';
import { WS_TERMINATE_CHANNEL, type WsTerminateMessage } from '@tickwheel/ws';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { instrumentTickwheel, METRICS, TIMEOUT_EVENT, type TickwheelInstrumentation } from '../src/index.js';
import { fetchTimeout, publish } from './helpers/messages.js';
import { histogram, Telemetry } from './helpers/telemetry.js';

/** The metric attributes of {@link fetchTimeout}'s default message. */
const FETCH_HEADERS_ATTRIBUTES = {
  'tickwheel.package': 'fetch',
  'tickwheel.phase': 'headers',
  'http.request.method': 'GET',
  'server.address': '127.0.0.1',
  'server.port': 8080,
  'url.scheme': 'http',
};

function grpcDeadline(overrides: Partial<GrpcDeadlineMessage> = {}): GrpcDeadlineMessage {
  return {
    side: 'client',
    path: '/shop.Cart/Checkout',
    limit: 'method',
    budgetMs: 250,
    elapsedMs: 251,
    propagated: false,
    budget: {
      limit: 'timeoutMs',
      inherited: false,
      source: undefined,
      budgetMs: 250,
      spentBeforeMs: 0,
      elapsedMs: 251,
      lateMs: 1,
    },
    context: undefined,
    ...overrides,
  };
}

describe('instrumentTickwheel', () => {
  let telemetry: Telemetry;
  let instrumentation: TickwheelInstrumentation | undefined;

  beforeEach(() => {
    telemetry = new Telemetry();
  });

  afterEach(async () => {
    instrumentation?.disable();
    instrumentation = undefined;
    await telemetry.shutdown();
  });

  function enable(options: Parameters<typeof instrumentTickwheel>[0] = {}): TickwheelInstrumentation {
    instrumentation = instrumentTickwheel({ meterProvider: telemetry.meterProvider, ...options });
    return instrumentation;
  }

  describe('fetch', () => {
    it('counts a timeout by phase, method and server, and records its elapsed time in seconds', async () => {
      enable();
      publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout());
      publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout({ elapsedMs: 204 }));
      publish(
        FETCH_TIMEOUT_CHANNEL,
        fetchTimeout({
          phase: 'total',
          method: 'POST',
          origin: 'https://api.example.com',
          limitMs: 5_000,
          elapsedMs: 5_002,
        }),
      );

      const attributes = FETCH_HEADERS_ATTRIBUTES;
      const headers = await telemetry.point(METRICS.timeouts, attributes);
      expect(headers.value).toBe(2);
      expect(headers.attributes).toEqual(attributes);
      const total = await telemetry.point(METRICS.timeouts, { 'tickwheel.phase': 'total' });
      expect(total.value).toBe(1);
      expect(total.attributes).toMatchObject({
        'http.request.method': 'POST',
        'server.address': 'api.example.com',
        'server.port': 443,
        'url.scheme': 'https',
      });

      const elapsed = histogram(await telemetry.point(METRICS.timeoutElapsed, { 'tickwheel.phase': 'headers' }));
      expect(elapsed.count).toBe(2);
      expect(elapsed.sum).toBeCloseTo(0.405, 9);
      expect(elapsed.min).toBeCloseTo(0.201, 9);
      expect(elapsed.max).toBeCloseTo(0.204, 9);
      // Both fall in the (0.1, 0.25] s bucket.
      const bucket = elapsed.buckets.boundaries.indexOf(0.25);
      expect(elapsed.buckets.counts[bucket]).toBe(2);
      const metric = (await telemetry.collect()).get(METRICS.timeoutElapsed)!;
      expect(metric.descriptor.unit).toBe('s');
      expect((await telemetry.collect()).get(METRICS.timeouts)!.descriptor.unit).toBe('{timeout}');
    });

    it('counts the event-stream phases of fetch, first-event and event-idle, as any other', async () => {
      enable();
      publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout({ phase: 'first-event', limitMs: 30_000, elapsedMs: 30_001 }));
      publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout({ phase: 'event-idle', limitMs: 15_000, elapsedMs: 95_000 }));
      publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout({ phase: 'event-idle', limitMs: 15_000, elapsedMs: 40_000 }));
      expect((await telemetry.point(METRICS.timeouts, { 'tickwheel.phase': 'first-event' })).value).toBe(1);
      expect((await telemetry.point(METRICS.timeouts, { 'tickwheel.phase': 'event-idle' })).value).toBe(2);
    });

    it('names a method outside the HTTP set _OTHER, as the semantic conventions ask', async () => {
      enable();
      publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout({ method: 'PROPFIND' }));
      expect((await telemetry.point(METRICS.timeouts)).attributes['http.request.method']).toBe('_OTHER');
    });

    it('counts retries by method and server', async () => {
      enable();
      const { error } = fetchTimeout();
      const retry: FetchRetryMessage = {
        method: 'GET',
        origin: 'http://127.0.0.1:8080',
        attempt: 1,
        delayMs: 100,
        error,
        context: undefined,
      };
      publish(FETCH_RETRY_CHANNEL, retry);
      publish(FETCH_RETRY_CHANNEL, { ...retry, attempt: 2, delayMs: 200 });
      const point = await telemetry.point(METRICS.fetchRetries);
      expect(point.value).toBe(2);
      expect(point.attributes).toEqual({
        'http.request.method': 'GET',
        'server.address': '127.0.0.1',
        'server.port': 8080,
        'url.scheme': 'http',
      });
    });
  });

  describe('grpc', () => {
    it('counts a deadline by side, limit and RPC method, with its elapsed time', async () => {
      enable();
      publish(GRPC_DEADLINE_CHANNEL, grpcDeadline());
      publish(
        GRPC_DEADLINE_CHANNEL,
        grpcDeadline({ side: 'server', limit: 'propagated', propagated: true, budgetMs: 1_000, elapsedMs: 1_000 }),
      );
      const client = await telemetry.point(METRICS.timeouts, { 'tickwheel.side': 'client' });
      expect(client.value).toBe(1);
      expect(client.attributes).toEqual({
        'tickwheel.package': 'grpc',
        'tickwheel.phase': 'method',
        'tickwheel.side': 'client',
        'tickwheel.propagated': false,
        'rpc.system': 'grpc',
        'rpc.service': 'shop.Cart',
        'rpc.method': 'Checkout',
      });
      const server = histogram(
        await telemetry.point(METRICS.timeoutElapsed, { 'tickwheel.side': 'server', 'tickwheel.propagated': true }),
      );
      expect(server.count).toBe(1);
      expect(server.sum).toBe(1);
    });

    it('counts handler aborts by reason', async () => {
      enable();
      const abort: GrpcHandlerAbortMessage = {
        path: '/shop.Cart/Checkout',
        reason: 'deadline',
        elapsedMs: 250,
        context: undefined,
      };
      publish(GRPC_HANDLER_ABORT_CHANNEL, abort);
      publish(GRPC_HANDLER_ABORT_CHANNEL, { ...abort, reason: 'client-cancelled' });
      publish(GRPC_HANDLER_ABORT_CHANNEL, abort);
      expect((await telemetry.point(METRICS.grpcHandlerAborts, { 'tickwheel.reason': 'deadline' })).value).toBe(2);
      expect((await telemetry.point(METRICS.grpcHandlerAborts, { 'tickwheel.reason': 'client-cancelled' })).value).toBe(
        1,
      );
    });
  });

  describe('http', () => {
    it('counts server limits by kind, outcome and whether the caller set the deadline, with the limit as elapsed', async () => {
      enable();
      const handler: HttpTimeoutMessage = {
        kind: 'handler',
        limitMs: 250,
        outcome: 'answered',
        req: undefined,
        propagated: true,
        budget: undefined,
        context: undefined,
      };
      publish(HTTP_TIMEOUT_CHANNEL, handler);
      publish(HTTP_TIMEOUT_CHANNEL, { ...handler, propagated: false, limitMs: 5_000 });
      publish(HTTP_TIMEOUT_CHANNEL, { ...handler, propagated: false, limitMs: 5_000, outcome: 'cut' });
      publish(HTTP_TIMEOUT_CHANNEL, { ...handler, kind: 'headers', limitMs: 10_000, propagated: false });
      publish(HTTP_TIMEOUT_CHANNEL, {
        ...handler,
        kind: 'keep-alive',
        limitMs: 65_000,
        outcome: 'closed',
        propagated: false,
      });
      publish(HTTP_TIMEOUT_CHANNEL, { ...handler, kind: 'body-idle', limitMs: 30_000, propagated: false });
      publish(HTTP_TIMEOUT_CHANNEL, { ...handler, kind: 'drain', limitMs: 1_000, propagated: false });

      const server = { 'tickwheel.package': 'http', 'tickwheel.side': 'server' };
      const propagated = await telemetry.point(METRICS.timeouts, { 'tickwheel.propagated': true });
      expect(propagated.value).toBe(1);
      expect(propagated.attributes).toEqual({
        ...server,
        'tickwheel.phase': 'handler',
        'tickwheel.outcome': 'answered',
        'tickwheel.propagated': true,
      });
      const own = { ...server, 'tickwheel.phase': 'handler', 'tickwheel.propagated': false };
      expect((await telemetry.point(METRICS.timeouts, { ...own, 'tickwheel.outcome': 'answered' })).value).toBe(1);
      expect((await telemetry.point(METRICS.timeouts, { ...own, 'tickwheel.outcome': 'cut' })).value).toBe(1);
      for (const [kind, outcome, seconds] of [
        ['headers', 'answered', 10],
        ['keep-alive', 'closed', 65],
        ['body-idle', 'answered', 30],
        ['drain', 'answered', 1],
      ] as const) {
        const attributes = { ...server, 'tickwheel.phase': kind, 'tickwheel.outcome': outcome };
        expect((await telemetry.point(METRICS.timeouts, attributes)).value).toBe(1);
        expect(histogram(await telemetry.point(METRICS.timeoutElapsed, attributes)).sum).toBe(seconds);
      }
      expect(
        histogram(await telemetry.point(METRICS.timeoutElapsed, { 'tickwheel.propagated': true })).sum,
      ).toBeCloseTo(0.25, 9);
    });

    it("adds no span event for an HTTP server limit: the context a request arrives in is its server's", async () => {
      enable();
      const arrival = telemetry.inSpan('server startup', () => captureContext({ hasSubscribers: true }));
      publish(HTTP_TIMEOUT_CHANNEL, {
        kind: 'handler',
        limitMs: 100,
        outcome: 'answered',
        req: undefined,
        propagated: false,
        budget: undefined,
        context: arrival,
      } satisfies HttpTimeoutMessage);
      trace.getSpan(arrival as Context)!.end();
      expect(telemetry.finishedSpans()[0].events).toEqual([]);
      expect((await telemetry.point(METRICS.timeouts, { 'tickwheel.package': 'http' })).value).toBe(1);
    });
  });

  describe('http event streams', () => {
    it('counts the ends of event streams by reason, none of them as a timeout', async () => {
      enable();
      for (const reason of ['closed', 'client-gone', 'client-gone', 'max-age', 'drain', 'slow-consumer'] as const) {
        publish(HTTP_EVENT_STREAM_END_CHANNEL, { reason, ageMs: 1_000 } satisfies HttpEventStreamEndMessage);
      }
      const ends = (reason: string) =>
        telemetry.point(METRICS.httpEventStreamEnds, { 'tickwheel.package': 'http', 'tickwheel.reason': reason });
      expect((await ends('client-gone')).value).toBe(2);
      for (const reason of ['closed', 'max-age', 'drain', 'slow-consumer']) expect((await ends(reason)).value).toBe(1);
      expect(await telemetry.points(METRICS.timeouts)).toEqual([]);
    });
  });

  describe('ws', () => {
    it('counts heartbeat terminations by reason, with how long the peer was quiet', async () => {
      enable();
      const dead: WsTerminateMessage = {
        reason: 'pong-timeout',
        quietMs: 1_003,
        limitMs: 1_000,
        socket: {},
        side: 'server',
      };
      publish(WS_TERMINATE_CHANNEL, dead);
      publish(WS_TERMINATE_CHANNEL, { ...dead, reason: 'idle-reader', quietMs: 30_000, limitMs: 30_000 });
      const pong = await telemetry.point(METRICS.timeouts, { 'tickwheel.phase': 'pong-timeout' });
      expect(pong.value).toBe(1);
      expect(pong.attributes).toEqual({
        'tickwheel.package': 'ws',
        'tickwheel.phase': 'pong-timeout',
        'tickwheel.side': 'server',
      });
      expect(
        histogram(await telemetry.point(METRICS.timeoutElapsed, { 'tickwheel.phase': 'pong-timeout' })).sum,
      ).toBeCloseTo(1.003, 9);
      expect(histogram(await telemetry.point(METRICS.timeoutElapsed, { 'tickwheel.phase': 'idle-reader' })).sum).toBe(
        30,
      );
    });
  });

  describe('redis', () => {
    it('records lateness on the server clock, lost leases and duplicates by namespace', async () => {
      enable();
      const fired: RedisFiredMessage = { namespace: 'buffs', id: 'a', dueAt: 1_000, lateMs: 3, attempts: 1 };
      publish(REDIS_FIRED_CHANNEL, fired);
      publish(REDIS_FIRED_CHANNEL, { ...fired, id: 'b', lateMs: 7 });
      publish(REDIS_LEASE_LOST_CHANNEL, { namespace: 'buffs', id: 'a', attempts: 1, stage: 'ack' });
      publish(REDIS_DUPLICATE_CHANNEL, { namespace: 'buffs', id: 'a', attempts: 2 });
      publish(REDIS_DUPLICATE_CHANNEL, { namespace: 'buffs', id: 'b', attempts: 3 });
      const lateness = histogram(
        await telemetry.point(METRICS.redisLateness, { 'tickwheel.redis.namespace': 'buffs' }),
      );
      expect(lateness.count).toBe(2);
      expect(lateness.sum).toBeCloseTo(0.01, 9);
      expect(lateness.max).toBeCloseTo(0.007, 9);
      expect((await telemetry.point(METRICS.redisLeasesLost, { 'tickwheel.redis.stage': 'ack' })).value).toBe(1);
      expect((await telemetry.point(METRICS.redisDuplicates)).value).toBe(2);
    });
  });

  describe('core', () => {
    const wheel = new TimingWheel({ clock: new ManualClock(0) });

    it('records wake-up lateness, timers fired and callback time', async () => {
      enable();
      const wake: WheelWakeMessage = { wheel, lateMs: 2, fired: 3, callbackMs: 0.5, pending: 10 };
      publish(CORE_WAKE_CHANNEL, wake);
      publish(CORE_WAKE_CHANNEL, { ...wake, lateMs: 0, fired: 0, callbackMs: 0 });
      const lateness = histogram(await telemetry.point(METRICS.wheelLateness));
      expect(lateness.count).toBe(2);
      expect(lateness.sum).toBeCloseTo(0.002, 9);
      expect((await telemetry.point(METRICS.wheelFired)).value).toBe(3);
      // A wake-up that fired nothing (a cascade, a long hop) has no callback time to record.
      const callbacks = histogram(await telemetry.point(METRICS.wheelCallbackDuration));
      expect(callbacks.count).toBe(1);
      expect(callbacks.sum).toBeCloseTo(0.0005, 9);
    });

    it('counts callback errors by error type and TimerSet expirations', async () => {
      enable();
      const handle = wheel.schedule(1, () => {});
      const error: CallbackErrorMessage = { wheel, error: new RangeError('boom'), handle };
      publish(CORE_CALLBACK_ERROR_CHANNEL, error);
      publish(CORE_CALLBACK_ERROR_CHANNEL, { ...error, error: 'a string' });
      expect((await telemetry.point(METRICS.wheelCallbackErrors, { 'error.type': 'RangeError' })).value).toBe(1);
      expect((await telemetry.point(METRICS.wheelCallbackErrors, { 'error.type': 'string' })).value).toBe(1);
      const expire = { timerSet: {}, key: 'burn', stacksLeft: 0 } as unknown as TimerSetExpireMessage;
      publish(CORE_TIMER_SET_EXPIRE_CHANNEL, expire);
      publish(CORE_TIMER_SET_EXPIRE_CHANNEL, { ...expire, stacksLeft: 2 });
      expect((await telemetry.point(METRICS.timerSetExpirations, { 'tickwheel.stacks_left': false })).value).toBe(1);
      expect((await telemetry.point(METRICS.timerSetExpirations, { 'tickwheel.stacks_left': true })).value).toBe(1);
      handle.cancel();
    });

    it('reports the pending timers of each named wheel at every collection', async () => {
      const clock = new ManualClock(0);
      const game = new TimingWheel({ clock });
      enable({ wheels: { game, later: () => game } });
      for (let i = 1; i <= 5; i++) game.schedule(i * 10, () => {});
      expect((await telemetry.point(METRICS.wheelPending, { 'tickwheel.wheel': 'game' })).value).toBe(5);
      clock.advance(25);
      expect((await telemetry.point(METRICS.wheelPending, { 'tickwheel.wheel': 'game' })).value).toBe(3);
      expect((await telemetry.point(METRICS.wheelPending, { 'tickwheel.wheel': 'later' })).value).toBe(3);
      game.close();
    });

    it("reports the shared wheel's pending timers by default", async () => {
      const { sharedWheel } = await import('@tickwheel/core');
      enable();
      const handles = [
        sharedWheel()
          .schedule(60_000, () => {})
          .unref(),
        sharedWheel()
          .schedule(60_000, () => {})
          .unref(),
      ];
      const pending = await telemetry.point(METRICS.wheelPending, { 'tickwheel.wheel': 'shared' });
      expect(pending.value).toBe(sharedWheel().size);
      expect(pending.value).toBeGreaterThanOrEqual(2);
      for (const h of handles) h.cancel();
    });
  });

  describe('span events', () => {
    it('adds a tickwheel.timeout event to the span of the request, captured when it started', () => {
      enable();
      // As an adapter does: capture the caller's context when the request starts (inside its
      // span), publish the timeout later from the wheel's callback (outside it).
      const requestContext = telemetry.inSpan('GET /slow', () => captureContext({ hasSubscribers: true }));
      publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout({ attempt: 1, context: requestContext }));
      trace.getSpan(requestContext as Context)!.end();
      const [span] = telemetry.finishedSpans();
      expect(span.name).toBe('GET /slow');
      expect(span.events).toHaveLength(1);
      expect(span.events[0].name).toBe(TIMEOUT_EVENT);
      expect(span.events[0].attributes).toEqual({
        ...FETCH_HEADERS_ATTRIBUTES,
        'tickwheel.limit_ms': 200,
        'tickwheel.elapsed_ms': 201,
        'tickwheel.attempt': 1,
      });
    });

    it("adds nothing to the span active when the timeout is published: it is not the request's", () => {
      enable();
      telemetry.inSpan('some other request', (span) => {
        publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout());
        span.end();
      });
      expect(telemetry.finishedSpans()[0].events).toEqual([]);
    });

    it('adds one for a gRPC deadline too; with spanEvents: false it captures nothing and adds none', () => {
      enable();
      const withEvent = telemetry.inSpan('shop.Cart/Checkout', () => captureContext({ hasSubscribers: true }));
      publish(GRPC_DEADLINE_CHANNEL, grpcDeadline({ context: withEvent }));
      trace.getSpan(withEvent as Context)!.end();
      instrumentation!.disable();
      enable({ spanEvents: false });
      expect(diagnosticsChannel.hasSubscribers(CORE_CAPTURE_CONTEXT_CHANNEL)).toBe(false);
      const without = telemetry.inSpan('quiet', () => captureContext({ hasSubscribers: true }));
      expect(without).toBeUndefined();
      telemetry.inSpan('quiet', (span) => {
        publish(GRPC_DEADLINE_CHANNEL, grpcDeadline({ context: context.active() }));
        span.end();
      });
      const [first, second] = telemetry.finishedSpans();
      expect(
        first.events.map((e) => [e.name, e.attributes?.['tickwheel.limit_ms'], e.attributes?.['rpc.method']]),
      ).toEqual([[TIMEOUT_EVENT, 250, 'Checkout']]);
      expect(second.events).toEqual([]);
    });

    it("adds nothing for a server-side deadline: its context is its connection's, not a span of the call", async () => {
      enable();
      const arrival = telemetry.inSpan('server startup', () => captureContext({ hasSubscribers: true }));
      publish(GRPC_DEADLINE_CHANNEL, grpcDeadline({ side: 'server', limit: 'max', context: arrival }));
      trace.getSpan(arrival as Context)!.end();
      expect(telemetry.finishedSpans()[0].events).toEqual([]);
      expect((await telemetry.point(METRICS.timeouts, { 'tickwheel.side': 'server' })).value).toBe(1);
    });

    it('adds nothing for a request that started before the instrumentation (no context)', async () => {
      enable();
      publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout());
      expect((await telemetry.point(METRICS.timeouts)).value).toBe(1);
      expect(telemetry.finishedSpans()).toEqual([]);
    });
  });
});

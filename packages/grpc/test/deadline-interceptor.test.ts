import * as grpc from '@grpc/grpc-js';
import { ManualClock, TimingWheel, withDeadline } from '@tickwheel/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deadlineInterceptor } from '../src/deadline-interceptor.js';
import type { DeadlineInterceptorOptions } from '../src/types.js';
import {
  collect,
  echoClient,
  echoImplementation,
  EchoService,
  newLog,
  nextStart,
  OtherService,
  ready,
  startServer,
  unary,
  type EchoClient,
  type HandlerLog,
  type Running,
} from './helpers/echo.js';

// The client's timers run on a ManualClock: every limit fires exactly when the test advances
// the clock there, never because the machine was slow. The server is real grpc-js on loopback.

let server: Running;
let log: HandlerLog;
const clients: grpc.Client[] = [];

beforeAll(async () => {
  log = newLog();
  server = await startServer([
    [EchoService.service, echoImplementation(log)],
    [OtherService.service, echoImplementation(log)],
  ]);
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

function setup(options: Omit<DeadlineInterceptorOptions, 'wheel'>, service = EchoService) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  const client = echoClient(server.address, [deadlineInterceptor({ ...options, wheel })], service);
  clients.push(client);
  return { clock, wheel, client };
}

/** A never-answered unary call under `options` stays open past 1 s of wheel time, with no timer. */
async function expectUntimedUnary(options: Omit<DeadlineInterceptorOptions, 'wheel'>): Promise<void> {
  const { clock, wheel, client } = setup(options);
  const call = await hangingUnary(client);
  clock.advance(1_000);
  await settle();
  expect(call.isSettled()).toBe(false);
  expect(wheel.size).toBe(0);
  call.outcome.catch(() => undefined);
  client.close();
}

/** Lets pending I/O and callbacks run, so "not failed yet" is a real observation. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5));
}

/** Starts a unary call that the server never answers, and waits until the server has it. */
async function hangingUnary(client: EchoClient, options: grpc.CallOptions = {}) {
  await ready(client);
  const started = nextStart(log);
  let settled = false;
  const outcome = unary(client, { text: 'x', delayMs: -1 }, options).finally(() => {
    settled = true;
  });
  await started;
  return { outcome, isSettled: () => settled };
}

describe('deadlineInterceptor', () => {
  describe('#timeoutMs', () => {
    it('fails a call with DEADLINE_EXCEEDED when the default timeout passes, and not before', async () => {
      const { clock, wheel, client } = setup({ timeoutMs: 100 });
      const call = await hangingUnary(client);
      expect(wheel.size).toBe(1);
      clock.advance(99);
      await settle();
      expect(call.isSettled()).toBe(false);
      clock.advance(1);
      const { err } = await call.outcome;
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(err?.details).toBe(
        'Deadline exceeded after 100 ms (default limit) on /tickwheel.test.Echo/Unary; timeoutMs of 100 ms: 100 ms in this call',
      );
      expect(wheel.size).toBe(0);
    });

    it('lets a fast call through and cancels its timer when the status arrives', async () => {
      const { wheel, client } = setup({ timeoutMs: 100 });
      await ready(client);
      const { err, res } = await unary(client, { text: 'fast', delayMs: 0 });
      expect(err).toBeNull();
      expect(res?.text).toBe('fast');
      expect(wheel.size).toBe(0);
      expect(wheel.stats().cancelled).toBe(1);
    });

    it('sends the budget to the server as grpc-timeout', async () => {
      let seenMs = -1;
      const probe = await startServer([
        [
          EchoService.service,
          {
            Unary(call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) {
              seenMs = Number(call.getDeadline()) - Date.now();
              callback(null, { text: 'ok' });
            },
          },
        ],
      ]);
      try {
        const client = echoClient(probe.address, [
          deadlineInterceptor({ timeoutMs: 5_000, wheel: new TimingWheel({ clock: new ManualClock(0) }) }),
        ]);
        clients.push(client);
        const { err } = await unary(client, { text: 'x' });
        expect(err).toBeNull();
        expect(seenMs).toBeGreaterThan(4_000);
        expect(seenMs).toBeLessThanOrEqual(5_000);
      } finally {
        await probe.close();
      }
    });

    it('leaves the caller’s Metadata object as it was', async () => {
      const { client } = setup({ timeoutMs: 1_000 });
      const metadata = new grpc.Metadata();
      metadata.set('x-trace', 'abc');
      const { err } = await unary(client, { text: 'x', delayMs: 0 }, {}, metadata);
      expect(err).toBeNull();
      expect(metadata.getMap()).toEqual({ 'x-trace': 'abc' });
    });

    it('arms no timer when no limit applies', async () => {
      const { wheel, client } = setup({});
      const call = await hangingUnary(client);
      expect(wheel.size).toBe(0);
      call.outcome.catch(() => undefined);
      client.close();
    });
  });

  describe('#overrides', () => {
    it('uses a method override over the service override and the default', async () => {
      const { clock, client } = setup({
        timeoutMs: 300,
        overrides: { '/tickwheel.test.Echo': 200, '/tickwheel.test.Echo/Unary': { timeoutMs: 50 } },
      });
      const call = await hangingUnary(client);
      clock.advance(49);
      await settle();
      expect(call.isSettled()).toBe(false);
      clock.advance(1);
      const { err } = await call.outcome;
      expect(err?.details).toBe(
        'Deadline exceeded after 50 ms (method limit) on /tickwheel.test.Echo/Unary; timeoutMs of 50 ms: 50 ms in this call',
      );
    });

    it('uses a service override for every method of that service only', async () => {
      const overrides = { '/tickwheel.test.Other': 40 };
      const other = setup({ timeoutMs: 300, overrides }, OtherService);
      const call = await hangingUnary(other.client);
      other.clock.advance(40);
      expect((await call.outcome).err?.details).toBe(
        'Deadline exceeded after 40 ms (service limit) on /tickwheel.test.Other/Unary; timeoutMs of 40 ms: 40 ms in this call',
      );

      const echo = setup({ timeoutMs: 300, overrides });
      const echoCall = await hangingUnary(echo.client);
      echo.clock.advance(299);
      await settle();
      expect(echoCall.isSettled()).toBe(false);
      echo.clock.advance(1);
      expect((await echoCall.outcome).err?.details).toBe(
        'Deadline exceeded after 300 ms (default limit) on /tickwheel.test.Echo/Unary; timeoutMs of 300 ms: 300 ms in this call',
      );
    });

    it('lifts the default for a method whose override is Infinity', async () => {
      await expectUntimedUnary({ timeoutMs: 10, overrides: { '/tickwheel.test.Echo/Unary': Infinity } });
    });
  });

  describe('#deadline', () => {
    it('honours an explicit deadline earlier than the timeout, on the wheel instead of a grpc-js timer', async () => {
      const { clock, wheel, client } = setup({ timeoutMs: 10_000 });
      const call = await hangingUnary(client, { deadline: Date.now() + 500 });
      expect(wheel.size).toBe(1);
      clock.advance(300);
      await settle();
      expect(call.isSettled()).toBe(false);
      clock.advance(200);
      const { err } = await call.outcome;
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      // The budget is what was left of the wall-clock deadline when the call was made.
      expect(err?.details).toMatch(
        /^Deadline exceeded after (3\d\d|4\d\d|500) ms \(explicit limit\) on \/tickwheel\.test\.Echo\/Unary; callOptions\.deadline of \d+ ms: \d+ ms in this call$/,
      );
    });

    it('keeps the timeout when the explicit deadline is later', async () => {
      const { clock, client } = setup({ timeoutMs: 100 });
      const call = await hangingUnary(client, { deadline: Date.now() + 60_000 });
      clock.advance(100);
      expect((await call.outcome).err?.details).toBe(
        'Deadline exceeded after 100 ms (default limit) on /tickwheel.test.Echo/Unary; timeoutMs of 100 ms: 100 ms in this call',
      );
    });

    it('clamps the call to the ambient withDeadline budget', async () => {
      const { clock, wheel, client } = setup({ timeoutMs: 1_000 });
      await ready(client);
      clock.advance(10);
      const started = nextStart(log);
      const outcome = withDeadline(80, () => unary(client, { text: 'x', delayMs: -1 }), { wheel });
      await started;
      clock.advance(30);
      // The ambient deadline's own timer and the call's.
      expect(wheel.size).toBe(2);
      clock.advance(50);
      const { err } = await outcome;
      expect(err?.details).toBe(
        'Deadline exceeded after 80 ms (propagated limit) on /tickwheel.test.Echo/Unary; the deadline of 80 ms from withDeadline: 0 ms spent before this call, 80 ms in it',
      );
    });

    it('fails at once, without touching the network, when the ambient budget is spent', async () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const before = log.started.length;
      // A fresh client: its channel stays IDLE unless a call really goes out.
      const client = echoClient(server.address, [deadlineInterceptor({ timeoutMs: 1_000, wheel })]);
      clients.push(client);
      const outcome = await withDeadline(
        20,
        async () => {
          clock.advance(20);
          return unary(client, { text: 'x', delayMs: 0 });
        },
        { wheel },
      );
      expect(outcome.err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(outcome.err?.details).toBe(
        'Deadline exceeded before the call started (propagated limit, 0 ms left) on /tickwheel.test.Echo/Unary; the deadline of 20 ms from withDeadline: 20 ms spent before this call, 0 ms in it',
      );
      expect(client.getChannel().getConnectivityState(false)).toBe(grpc.connectivityState.IDLE);
      expect(log.started.length).toBe(before);
      expect(wheel.size).toBe(0);
    });

    it('refuses a call whose ambient deadline was aborted by a cancel', async () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const client = echoClient(server.address, [deadlineInterceptor({ wheel })]);
      clients.push(client);
      const cancel = new AbortController();
      cancel.abort();
      const { err } = await withDeadline(1_000, () => unary(client, { text: 'x', delayMs: 0 }), {
        wheel,
        signal: cancel.signal,
      });
      expect(err?.code).toBe(grpc.status.CANCELLED);
      expect(client.getChannel().getConnectivityState(false)).toBe(grpc.connectivityState.IDLE);
    });

    it('cancels a running call when its ambient deadline is aborted by a cancel', async () => {
      const { wheel, client } = setup({});
      await ready(client);
      const cancel = new AbortController();
      const started = nextStart(log);
      const outcome = withDeadline(1_000, () => unary(client, { text: 'x', delayMs: -1 }), {
        wheel,
        signal: cancel.signal,
      });
      await started;
      cancel.abort();
      const { err } = await outcome;
      expect(err?.code).toBe(grpc.status.CANCELLED);
      expect(wheel.size).toBe(0);
    });
  });

  describe('#reserveMs', () => {
    it('takes the reserve off an ambient budget, on the wire and on the client’s timer', async () => {
      const { clock, wheel, client } = setup({ reserveMs: 30 });
      await ready(client);
      const started = nextStart(log);
      const outcome = withDeadline(100, () => unary(client, { text: 'x', delayMs: -1 }), { wheel });
      await started;
      clock.advance(69);
      await settle();
      clock.advance(1);
      const { err } = await outcome;
      expect(err?.details).toBe(
        'Deadline exceeded after 70 ms (propagated limit) on /tickwheel.test.Echo/Unary; the deadline of 100 ms from withDeadline: 0 ms spent before this call, 70 ms in it',
      );
    });

    it('leaves an explicit deadline and the configured timeout as they are', async () => {
      const { clock, wheel, client } = setup({ timeoutMs: 50, reserveMs: 30 });
      await ready(client);
      const started = nextStart(log);
      const outcome = withDeadline(1_000, () => unary(client, { text: 'x', delayMs: -1 }), { wheel });
      await started;
      clock.advance(50);
      expect((await outcome).err?.details).toBe(
        'Deadline exceeded after 50 ms (default limit) on /tickwheel.test.Echo/Unary; timeoutMs of 50 ms: 50 ms in this call',
      );
    });

    it('applies a per-method reserve over the top-level one', async () => {
      const { clock, wheel, client } = setup({
        reserveMs: 10,
        overrides: { '/tickwheel.test.Echo/Unary': { reserveMs: 60 } },
      });
      await ready(client);
      const started = nextStart(log);
      const outcome = withDeadline(100, () => unary(client, { text: 'x', delayMs: -1 }), { wheel });
      await started;
      clock.advance(40);
      expect((await outcome).err?.details).toBe(
        'Deadline exceeded after 40 ms (propagated limit) on /tickwheel.test.Echo/Unary; the deadline of 100 ms from withDeadline: 0 ms spent before this call, 40 ms in it',
      );
    });
  });

  describe('#minBudgetMs', () => {
    it('fails at once, never sent, when less than minBudgetMs is left of the propagated budget after the reserve', async () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const client = echoClient(server.address, [deadlineInterceptor({ reserveMs: 20, minBudgetMs: 50, wheel })]);
      clients.push(client);
      const before = log.started.length;
      const outcome = await withDeadline(
        100,
        async () => {
          clock.advance(38);
          return unary(client, { text: 'x', delayMs: 0 });
        },
        { wheel },
      );
      expect(outcome.err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(outcome.err?.details).toBe(
        'Deadline exceeded before the call started: 42 ms left of the propagated budget, below minBudgetMs 50, on /tickwheel.test.Echo/Unary; the deadline of 100 ms from withDeadline: 38 ms spent before this call, 0 ms in it',
      );
      expect(client.getChannel().getConnectivityState(false)).toBe(grpc.connectivityState.IDLE);
      expect(log.started.length).toBe(before);
      expect(wheel.size).toBe(0);
    });

    it('sends a call that has at least minBudgetMs left', async () => {
      const { clock, wheel, client } = setup({ minBudgetMs: 50 });
      await ready(client);
      const outcome = withDeadline(
        100,
        () => {
          clock.advance(50);
          return unary(client, { text: 'ok', delayMs: 0 });
        },
        { wheel },
      );
      expect((await outcome).err).toBeNull();
    });

    it('does not apply to an explicit deadline', async () => {
      const { client } = setup({ minBudgetMs: 5_000 });
      await ready(client);
      const { err } = await unary(client, { text: 'ok', delayMs: 0 }, { deadline: Date.now() + 2_000 });
      expect(err).toBeNull();
    });
  });

  describe('#streamIdleMs', () => {
    it('fails a server stream that sends nothing for streamIdleMs', async () => {
      const { clock, client } = setup({ streamIdleMs: 100 });
      await ready(client);
      const started = nextStart(log);
      const outcome = collect(client.ServerStream({ text: 's', delayMs: -1, count: 3 }));
      await started;
      clock.advance(99);
      await settle();
      clock.advance(1);
      const { err } = await outcome;
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(err?.details).toBe(
        'Deadline exceeded: no message for 100 ms (stream idle limit) on /tickwheel.test.Echo/ServerStream; streamIdleMs of 100 ms: 100 ms in this call',
      );
    });

    it('restarts the idle limit on each message received', async () => {
      const { clock, wheel, client } = setup({ streamIdleMs: 100 });
      await ready(client);
      const started = nextStart(log);
      const bidi = client.Bidi();
      const received: string[] = [];
      const nextMessage = (): Promise<void> =>
        new Promise((resolve) => bidi.once('data', (m: { text: string }) => (received.push(m.text), resolve())));
      const outcome = collect(bidi);
      bidi.write({ text: 'a', delayMs: 0 });
      await started;
      await nextMessage();
      clock.advance(60);
      bidi.write({ text: 'b', delayMs: 0 });
      await nextMessage();
      clock.advance(60); // 120 since the start, 60 since the last message
      await settle();
      expect(received).toEqual(['a', 'b']);
      expect(wheel.size).toBe(1);
      clock.advance(40);
      const { err } = await outcome;
      expect(err?.details).toBe(
        'Deadline exceeded: no message for 100 ms (stream idle limit) on /tickwheel.test.Echo/Bidi; streamIdleMs of 100 ms: 160 ms in this call',
      );
    });

    it('still ends an active stream at its deadline', async () => {
      const { clock, client } = setup({ timeoutMs: 150, streamIdleMs: 100 });
      await ready(client);
      const started = nextStart(log);
      const bidi = client.Bidi();
      const nextMessage = (): Promise<void> => new Promise((resolve) => bidi.once('data', () => resolve()));
      const outcome = collect(bidi);
      bidi.write({ text: 'a', delayMs: 0 });
      await started;
      await nextMessage();
      clock.advance(90);
      bidi.write({ text: 'b', delayMs: 0 });
      await nextMessage();
      clock.advance(59);
      await settle();
      clock.advance(1);
      const { err } = await outcome;
      expect(err?.details).toBe(
        'Deadline exceeded after 150 ms (default limit) on /tickwheel.test.Echo/Bidi; timeoutMs of 150 ms: 150 ms in this call',
      );
    });

    it('does not apply to calls with a single response', async () => {
      await expectUntimedUnary({ streamIdleMs: 10 });
    });
  });

  describe('#callTypes', () => {
    it('times all four call types on one handle each and releases it when they complete', async () => {
      const { wheel, client } = setup({ timeoutMs: 1_000 });
      await ready(client);
      expect((await unary(client, { text: 'u', delayMs: 0 })).err).toBeNull();
      const serverStream = await collect(client.ServerStream({ text: 's', delayMs: 0, count: 2 }));
      expect(serverStream.messages.map((m) => m.text)).toEqual(['s#1', 's#2']);
      const clientStream = await new Promise<string | undefined>((resolve, reject) => {
        const writable = client.ClientStream({}, (err, res) => (err ? reject(err) : resolve(res?.text)));
        writable.write({ text: 'a' });
        writable.write({ text: 'b' });
        writable.end();
      });
      expect(clientStream).toBe('a,b');
      const bidi = client.Bidi();
      const bidiOutcome = collect(bidi);
      bidi.write({ text: 'x', delayMs: 0 });
      bidi.end();
      expect((await bidiOutcome).messages.map((m) => m.text)).toEqual(['x']);
      expect(wheel.stats().scheduled).toBe(4);
      expect(wheel.size).toBe(0);
    });

    it('ends streaming calls of every type at the deadline', async () => {
      const { clock, wheel, client } = setup({ timeoutMs: 100 });
      await ready(client);
      const serverStreamStarted = nextStart(log);
      const serverStream = collect(client.ServerStream({ text: 's', delayMs: -1, count: 1 }));
      await serverStreamStarted;
      const clientStreamStarted = nextStart(log);
      const clientStream = new Promise<grpc.ServiceError | null>((resolve) => {
        const writable = client.ClientStream({}, (err) => resolve(err));
        writable.write({ text: 'a' });
      });
      await clientStreamStarted;
      const bidiStarted = nextStart(log);
      const bidi = client.Bidi();
      const bidiOutcome = collect(bidi);
      bidi.write({ text: 'x', delayMs: -1 });
      await bidiStarted;
      expect(wheel.size).toBe(3);
      clock.advance(99);
      await settle();
      expect(wheel.size).toBe(3);
      clock.advance(1);
      expect((await serverStream).err?.details).toBe(
        'Deadline exceeded after 100 ms (default limit) on /tickwheel.test.Echo/ServerStream; timeoutMs of 100 ms: 100 ms in this call',
      );
      expect((await clientStream)?.details).toBe(
        'Deadline exceeded after 100 ms (default limit) on /tickwheel.test.Echo/ClientStream; timeoutMs of 100 ms: 100 ms in this call',
      );
      expect((await bidiOutcome).err?.details).toBe(
        'Deadline exceeded after 100 ms (default limit) on /tickwheel.test.Echo/Bidi; timeoutMs of 100 ms: 100 ms in this call',
      );
      expect(wheel.size).toBe(0);
    });
  });

  describe('#options', () => {
    it.each([
      [
        { timeoutMs: -1 },
        RangeError,
        '@tickwheel/grpc: timeoutMs must be a number of ms >= 0 (0 or Infinity: no limit), got -1',
      ],
      [
        { timeoutMs: Number.NaN },
        RangeError,
        'timeoutMs must be a number of ms >= 0 (0 or Infinity: no limit), got NaN',
      ],
      [{ timeoutMs: '100' }, TypeError, 'timeoutMs must be a number of ms >= 0 (0 or Infinity: no limit), got "100"'],
      [{ streamIdleMs: -1 }, RangeError, 'streamIdleMs must be a number of ms >= 0 (0 or Infinity: no limit), got -1'],
      [
        { overrides: { 'tickwheel.test.Echo/Unary': 5 } },
        RangeError,
        `@tickwheel/grpc: overrides keys must be '/package.Service' or '/package.Service/Method' (as in method_definition.path), got "tickwheel.test.Echo/Unary"`,
      ],
      [{ overrides: { '/a.B/C/D': 5 } }, RangeError, 'got "/a.B/C/D"'],
      [
        { overrides: { '/a.B/C': -5 } },
        RangeError,
        'overrides["/a.B/C"] must be a number of ms >= 0 (0 or Infinity: no limit), got -5',
      ],
      [
        { overrides: { '/a.B': { streamIdleMs: Number.NaN } } },
        RangeError,
        'overrides["/a.B"].streamIdleMs must be a number of ms >= 0 (0 or Infinity: no limit)',
      ],
      [{ overrides: { '/a.B': { timeout: 5 } } }, TypeError, 'unknown option overrides["/a.B"].timeout'],
      [
        { timeoutMS: 100 },
        TypeError,
        '@tickwheel/grpc: unknown option timeoutMS; known options: timeoutMs, streamIdleMs, reserveMs, minBudgetMs, retry, overrides, wheel',
      ],
      [{ wheel: {} }, TypeError, '@tickwheel/grpc: wheel must be a TimingWheel from @tickwheel/core, got {}'],
      [{ reserveMs: -1 }, RangeError, '@tickwheel/grpc: reserveMs must be a finite number of ms >= 0, got -1'],
      [{ reserveMs: Infinity }, RangeError, 'reserveMs must be a finite number of ms >= 0, got Infinity'],
      [{ minBudgetMs: '5' }, TypeError, '@tickwheel/grpc: minBudgetMs must be a finite number of ms >= 0, got "5"'],
      [
        { overrides: { '/a.B/C': { minBudgetMs: Number.NaN } } },
        RangeError,
        'overrides["/a.B/C"].minBudgetMs must be a finite number of ms >= 0, got NaN',
      ],
    ])('rejects %o at construction', (options, type, message) => {
      expect(() => deadlineInterceptor(options as DeadlineInterceptorOptions)).toThrow(type);
      expect(() => deadlineInterceptor(options as DeadlineInterceptorOptions)).toThrow(message);
    });

    it('rejects options that are not an object', () => {
      expect(() => deadlineInterceptor(5 as unknown as DeadlineInterceptorOptions)).toThrow(
        '@tickwheel/grpc: options must be an object, got 5',
      );
    });
  });
});

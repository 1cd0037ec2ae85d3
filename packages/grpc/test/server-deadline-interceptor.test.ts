import * as grpc from '@grpc/grpc-js';
import {
  createDeadline,
  currentDeadline,
  ManualClock,
  sharedWheel,
  TimingWheel,
  type DeadlineScope,
} from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { serverDeadlineInterceptor } from '../src/server-deadline-interceptor.js';
import type { ServerDeadlineInterceptorOptions } from '../src/types.js';
import {
  collect,
  echoClient,
  echoImplementation,
  EchoService,
  newLog,
  nextStart,
  ourServerDeadline,
  ready,
  serverDeadline,
  startServer,
  unary,
  type EchoClient,
  type EchoReply,
  type EchoRequest,
  type HandlerLog,
  type Running,
} from './helpers/echo.js';

// The server's timers run on a ManualClock, so each limit fires exactly when the test advances
// it. Clients send no deadline, or one far beyond the test, so grpc-js's own grpc-timeout timer
// (which the server always runs) never interferes.

const running: Running[] = [];
const clients: grpc.Client[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const server of running.splice(0)) await server.close();
});

interface Setup {
  clock: ManualClock;
  wheel: TimingWheel;
  client: EchoClient;
  log: HandlerLog;
  statusesSent: grpc.StatusObject['code'][];
  /** The deadline the server was started in, when `enclosingMs` was given. */
  enclosing: DeadlineScope | undefined;
}

/**
 * A server with the interceptor on a ManualClock wheel. Below it sits a probe interceptor that
 * records every status that reaches grpc-js's own call, i.e. every status put on the wire.
 */
async function setup(
  options: Omit<ServerDeadlineInterceptorOptions, 'wheel'>,
  implementation?: grpc.UntypedServiceImplementation,
  enclosingMs?: number,
): Promise<Setup> {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  const log = newLog();
  const statusesSent: grpc.StatusObject['code'][] = [];
  const probe: grpc.ServerInterceptor = (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      sendStatus: (status, next) => {
        statusesSent.push(status.code);
        next(status);
      },
    });
  // With enclosingMs the server is bound inside a deadline, which its connections inherit.
  const enclosing = enclosingMs === undefined ? undefined : createDeadline(enclosingMs, { wheel });
  const start = (): Promise<Running> =>
    startServer([[EchoService.service, implementation ?? echoImplementation(log)]], {
      interceptors: [probe, serverDeadlineInterceptor({ ...options, wheel })],
    });
  const server = await (enclosing === undefined ? start() : enclosing.run(start));
  running.push(server);
  const client = echoClient(server.address);
  clients.push(client);
  await ready(client);
  return { clock, wheel, client, log, statusesSent, enclosing };
}

function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5));
}

describe('serverDeadlineInterceptor', () => {
  describe('#defaultTimeoutMs', () => {
    it('ends a call that came without a deadline after defaultTimeoutMs, and aborts the handler’s signal', async () => {
      const { clock, wheel, client, log, statusesSent } = await setup({ defaultTimeoutMs: 100 });
      const started = nextStart(log);
      let settled = false;
      const outcome = unary(client, { text: 'x', delayMs: -1 }).finally(() => (settled = true));
      await started;
      // One handle: the ambient deadline's, which also reports the expiry to the call.
      expect(wheel.size).toBe(1);
      const signal = log.signals[0]!;
      clock.advance(99);
      await settle();
      expect(settled).toBe(false);
      expect(signal.aborted).toBe(false);
      clock.advance(1);
      const { err } = await outcome;
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(serverDeadline(err)).toEqual(ourServerDeadline('default', 100, '/tickwheel.test.Echo/Unary'));
      expect(signal.aborted).toBe(true);
      expect((signal.reason as DOMException).name).toBe('TimeoutError');
      expect(statusesSent).toEqual([grpc.status.DEADLINE_EXCEEDED]);
      expect(wheel.size).toBe(0);
    });

    it('gives the handler the deadline as currentDeadline() and call.getDeadline()', async () => {
      let wallDeadline = 0;
      const { client } = await setup(
        { defaultTimeoutMs: 250 },
        {
          Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
            wallDeadline = Number(call.getDeadline()) - Date.now();
            callback(null, { text: 'ok', remainingMs: currentDeadline()?.remaining() ?? -1 });
          },
        },
      );
      const { err, res } = await unary(client, { text: 'x' });
      expect(err).toBeNull();
      expect(res?.remainingMs).toBe(250);
      expect(wallDeadline).toBeGreaterThan(200);
      expect(wallDeadline).toBeLessThanOrEqual(250);
    });

    it('gives no ambient deadline when no limit applies', async () => {
      const { client, wheel } = await setup({});
      const { err, res } = await unary(client, { text: 'x', delayMs: 0 });
      expect(err).toBeNull();
      expect(res?.remainingMs).toBe(-1);
      expect(wheel.stats().scheduled).toBe(0);
    });
  });

  describe('#maxTimeoutMs', () => {
    it('caps a longer client deadline', async () => {
      const { clock, client, log } = await setup({ maxTimeoutMs: 100 });
      const started = nextStart(log);
      const outcome = unary(client, { text: 'x', delayMs: -1 }, { deadline: Date.now() + 60_000 });
      await started;
      clock.advance(100);
      const { err } = await outcome;
      expect(serverDeadline(err)).toEqual(ourServerDeadline('max', 100, '/tickwheel.test.Echo/Unary'));
    });

    it('keeps a shorter client deadline, named as propagated', async () => {
      const { clock, client, log } = await setup({ maxTimeoutMs: 120_000 });
      const started = nextStart(log);
      const outcome = unary(client, { text: 'x', delayMs: -1 }, { deadline: Date.now() + 60_000 });
      await started;
      clock.advance(59_000);
      await settle();
      clock.advance(1_000);
      const { err } = await outcome;
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(err?.details).toBe('Deadline exceeded');
      expect(serverDeadline(err).trailer).toMatch(
        /^limit=propagated; budget-ms=(59\d\d\d|60000); path=\/tickwheel\.test\.Echo\/Unary$/,
      );
    });

    it('reads 0 as no cap, the "off" of every tickwheel limit', async () => {
      const { client, log } = await setup({ maxTimeoutMs: 0 });
      const { err } = await unary(client, { text: 'x', delayMs: 0 });
      expect(err).toBeNull();
      expect(log.started.length).toBe(1);
    });

    it('answers a call whose budget is spent on arrival without running the handler', async () => {
      const { client, log, statusesSent } = await setup({ maxTimeoutMs: 1_000 });
      const spent = new grpc.Metadata();
      spent.set('tickwheel-timeout', '0m');
      const { err } = await unary(client, { text: 'x', delayMs: 0 }, {}, spent);
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(serverDeadline(err)).toEqual(ourServerDeadline('propagated', 0, '/tickwheel.test.Echo/Unary'));
      expect(log.started).toEqual([]);
      expect(statusesSent).toEqual([grpc.status.DEADLINE_EXCEEDED]);
    });
  });

  describe('#overrides', () => {
    it('applies method over service over top-level settings', async () => {
      const { clock, client, log } = await setup({
        defaultTimeoutMs: 1_000,
        overrides: {
          '/tickwheel.test.Echo': { defaultTimeoutMs: 500, maxTimeoutMs: 400 },
          '/tickwheel.test.Echo/Unary': { maxTimeoutMs: 30 },
        },
      });
      const started = nextStart(log);
      const outcome = unary(client, { text: 'x', delayMs: -1 });
      await started;
      clock.advance(30);
      expect(serverDeadline((await outcome).err)).toEqual(ourServerDeadline('max', 30, '/tickwheel.test.Echo/Unary'));

      const streamStarted = nextStart(log);
      const stream = collect(client.ServerStream({ text: 's', delayMs: -1, count: 1 }));
      await streamStarted;
      clock.advance(399);
      await settle();
      clock.advance(1);
      expect(serverDeadline((await stream).err)).toEqual(
        ourServerDeadline('max', 400, '/tickwheel.test.Echo/ServerStream'),
      );
    });
  });

  describe('#sendStatus', () => {
    it('sends DEADLINE_EXCEEDED exactly once and drops what the handler sends afterwards', async () => {
      let lateWrite: (() => void) | undefined;
      const { clock, client, statusesSent } = await setup(
        { defaultTimeoutMs: 50 },
        {
          Unary(_call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
            // The handler ignores its signal and answers late, twice.
            lateWrite = () => {
              callback(null, { text: 'late', remainingMs: 0 });
              callback({ code: grpc.status.INTERNAL, details: 'also late' });
            };
          },
        },
      );
      const outcome = unary(client, { text: 'x' });
      while (lateWrite === undefined) await settle();
      clock.advance(50);
      const { err } = await outcome;
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      lateWrite();
      await settle();
      expect(statusesSent).toEqual([grpc.status.DEADLINE_EXCEEDED]);
    });

    it('sends DEADLINE_EXCEEDED before the handler hears of the deadline, even when it answers from its abort listener', async () => {
      const { clock, client, statusesSent } = await setup(
        { defaultTimeoutMs: 50 },
        {
          Unary(_call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
            currentDeadline()!.signal.addEventListener('abort', () =>
              callback({ code: grpc.status.INTERNAL, details: 'gave up' }),
            );
          },
        },
      );
      const outcome = unary(client, { text: 'x' });
      await settle();
      clock.advance(50);
      const { err } = await outcome;
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(statusesSent).toEqual([grpc.status.DEADLINE_EXCEEDED]);
    });

    it('passes the handler’s own status through once and disposes the deadline', async () => {
      const { client, wheel, statusesSent } = await setup({ defaultTimeoutMs: 1_000 });
      const { err } = await unary(client, { text: 'x', delayMs: 0 });
      expect(err).toBeNull();
      expect(statusesSent).toEqual([grpc.status.OK]);
      expect(wheel.size).toBe(0);
    });
  });

  describe('#cancel', () => {
    it('aborts the handler’s signal when the client cancels', async () => {
      const { wheel, client, log } = await setup({ defaultTimeoutMs: 10_000 });
      const started = nextStart(log);
      const call = client.Unary({ text: 'x', delayMs: -1 }, {}, () => undefined);
      await started;
      const signal = log.signals[0]!;
      const aborted = new Promise<unknown>((resolve) => signal.addEventListener('abort', () => resolve(signal.reason)));
      call.cancel();
      const reason = (await aborted) as DOMException;
      expect(reason.name).toBe('AbortError');
      expect(reason.message).toBe('The client cancelled the call');
      expect(wheel.size).toBe(0);
    });

    it('aborts a signal first read after the cancel, and the deadlines nested in the handler', async () => {
      let nested: DeadlineScope | undefined;
      let seenOnCancel: AbortSignal | undefined;
      const { wheel, client } = await setup(
        { defaultTimeoutMs: 10_000 },
        {
          Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>) {
            // Reads nothing now: no AbortSignal exists until the 'cancelled' listener asks for one.
            nested = createDeadline(60_000);
            call.on('cancelled', () => (seenOnCancel = currentDeadline()?.signal));
          },
        },
      );
      const call = client.Unary({ text: 'x' }, {}, () => undefined);
      while (nested === undefined) await settle();
      call.cancel();
      while (seenOnCancel === undefined) await settle();
      expect((seenOnCancel.reason as DOMException).name).toBe('AbortError');
      expect(nested.signal.aborted).toBe(true);
      expect((nested.signal.reason as DOMException).message).toBe('The client cancelled the call');
      expect(nested.remaining()).toBe(10_000);
      expect(wheel.size).toBe(0);
    });
    it('runs the cancelled listener outside the finished call’s deadline when the handler answered', async () => {
      // grpc-js reports every stream's close to onCancel, answered or not (its unary call emits
      // 'cancelled' then too); the answered call's deadline is disposed, so nothing runs in it.
      const seen: Array<{ ambient: boolean }> = [];
      const { client, wheel } = await setup(
        { defaultTimeoutMs: 10_000 },
        {
          Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
            call.on('cancelled', () => seen.push({ ambient: currentDeadline() !== undefined }));
            callback(null, { text: call.request.text, remainingMs: 0 });
          },
        },
      );
      const { err } = await unary(client, { text: 'x' });
      expect(err).toBeNull();
      while (seen.length === 0) await settle();
      expect(seen).toEqual([{ ambient: false }]);
      expect(wheel.size).toBe(0);
    });
  });

  describe('#enclosingDeadline', () => {
    it('answers CANCELLED when the deadline the server was started in is aborted', async () => {
      const { client, log, wheel, statusesSent, enclosing } = await setup(
        { defaultTimeoutMs: 1_000 },
        undefined,
        60_000,
      );
      const started = nextStart(log);
      const outcome = unary(client, { text: 'x', delayMs: -1 });
      await started;
      expect(log.remaining).toEqual([1_000]);
      enclosing!.abort(new DOMException('shutting down', 'AbortError'));
      const { err } = await outcome;
      expect(err?.code).toBe(grpc.status.CANCELLED);
      expect(err?.details).toBe('Cancelled: the deadline this call inherited was aborted');
      expect((log.signals[0]!.reason as DOMException).message).toBe('shutting down');
      expect(statusesSent).toEqual([grpc.status.CANCELLED]);
      expect(wheel.size).toBe(0);
    });

    it('ends the call at the enclosing deadline when it is the earlier one', async () => {
      const { clock, client, log, statusesSent } = await setup({ defaultTimeoutMs: 1_000 }, undefined, 300);
      const started = nextStart(log);
      const outcome = unary(client, { text: 'x', delayMs: -1 });
      await started;
      expect(log.remaining).toEqual([300]);
      clock.advance(300);
      const { err } = await outcome;
      expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect(serverDeadline(err)).toEqual(ourServerDeadline('default', 1000, '/tickwheel.test.Echo/Unary'));
      expect(statusesSent).toEqual([grpc.status.DEADLINE_EXCEEDED]);
    });
  });

  describe('#callTypes', () => {
    it('carries the deadline into the handlers of all four call types', async () => {
      const { client } = await setup({ defaultTimeoutMs: 5_000 });
      const unaryCall = await unary(client, { text: 'u', delayMs: 0 });
      expect(unaryCall.res?.remainingMs).toBe(5_000);

      const serverStream = await collect(client.ServerStream({ text: 's', delayMs: 0, count: 2 }));
      expect(serverStream.err).toBeNull();
      expect(serverStream.messages.map((m) => [m.text, m.remainingMs])).toEqual([
        ['s#1', 5_000],
        ['s#2', 5_000],
      ]);

      const clientStream = await new Promise<EchoReply | undefined>((resolve, reject) => {
        const writable = client.ClientStream({}, (err, res) => (err ? reject(err) : resolve(res)));
        writable.write({ text: 'a' });
        writable.write({ text: 'b' });
        writable.end();
      });
      expect(clientStream).toEqual({ text: 'a,b', remainingMs: 5_000 });

      const bidi = client.Bidi();
      const bidiOutcome = collect(bidi);
      bidi.write({ text: 'x', delayMs: 0 });
      bidi.write({ text: 'y', delayMs: 0 });
      bidi.end();
      const { err, messages } = await bidiOutcome;
      expect(err).toBeNull();
      // Read inside the stream's 'data' handler: the context reaches event handlers too.
      expect(messages.map((m) => [m.text, m.remainingMs])).toEqual([
        ['x', 5_000],
        ['y', 5_000],
      ]);
    });

    it('ends streaming calls of every type at the deadline', async () => {
      const { clock, client, log } = await setup({ defaultTimeoutMs: 100 });
      const bidiStarted = nextStart(log);
      const bidi = client.Bidi();
      const bidiOutcome = collect(bidi);
      bidi.write({ text: 'x', delayMs: -1 });
      await bidiStarted;
      const clientStreamStarted = nextStart(log);
      const clientStream = new Promise<grpc.ServiceError | null>((resolve) => {
        const writable = client.ClientStream({}, (err) => resolve(err));
        writable.write({ text: 'a' });
      });
      await clientStreamStarted;
      clock.advance(100);
      expect(serverDeadline((await bidiOutcome).err)).toEqual(
        ourServerDeadline('default', 100, '/tickwheel.test.Echo/Bidi'),
      );
      expect(serverDeadline(await clientStream)).toEqual(
        ourServerDeadline('default', 100, '/tickwheel.test.Echo/ClientStream'),
      );
    });
  });

  describe('#options', () => {
    it.each([
      [
        { defaultTimeoutMs: -5 },
        RangeError,
        '@tickwheel/grpc: defaultTimeoutMs must be a number of ms >= 0 (0 or Infinity: no limit), got -5',
      ],
      [
        { maxTimeoutMs: Number.NaN },
        RangeError,
        'maxTimeoutMs must be a number of ms >= 0 (0 or Infinity: no limit), got NaN',
      ],
      [
        { maxTimeoutMs: null },
        TypeError,
        'maxTimeoutMs must be a number of ms >= 0 (0 or Infinity: no limit), got null',
      ],
      [
        { overrides: { '/a.B/': {} } },
        RangeError,
        `@tickwheel/grpc: overrides keys must be '/package.Service' or '/package.Service/Method'`,
      ],
      [{ overrides: { '/a.B/C': 100 } }, TypeError, '@tickwheel/grpc: overrides["/a.B/C"] must be an object, got 100'],
      [
        { overrides: { '/a.B/C': { maxTimeoutMs: -1 } } },
        RangeError,
        'overrides["/a.B/C"].maxTimeoutMs must be a number of ms >= 0 (0 or Infinity: no limit)',
      ],
      [
        { timeoutMs: 5 },
        TypeError,
        '@tickwheel/grpc: unknown option timeoutMs; known options: defaultTimeoutMs, maxTimeoutMs, overrides, wheel',
      ],
      [{ wheel: 3 }, TypeError, 'wheel must be a TimingWheel from @tickwheel/core, got 3'],
    ])('rejects %o at construction', (options, type, message) => {
      expect(() => serverDeadlineInterceptor(options as ServerDeadlineInterceptorOptions)).toThrow(type);
      expect(() => serverDeadlineInterceptor(options as ServerDeadlineInterceptorOptions)).toThrow(message);
    });

    it('times calls on the new shared wheel after the shared one was closed (no wheel option)', async () => {
      const server = await startServer([[EchoService.service, echoImplementation(newLog())]], {
        interceptors: [serverDeadlineInterceptor({ defaultTimeoutMs: 60_000 })],
      });
      running.push(server);
      const client = echoClient(server.address);
      clients.push(client);
      await ready(client);
      const first = await unary(client, { text: 'x' });
      expect(first.err).toBeNull();
      const closed = sharedWheel();
      closed.close();
      const second = await unary(client, { text: 'x' });
      expect(second.err).toBeNull();
      expect(second.res?.remainingMs).toBeGreaterThan(59_000);
      expect(sharedWheel()).not.toBe(closed);
      expect(sharedWheel().isClosed).toBe(false);
    }, 10_000); // before the fix the second call hung until the test's timeout

    it('ends a call with INTERNAL, naming the cause, when its wheel option was closed', async () => {
      const wheel = new TimingWheel();
      const log = newLog();
      const server = await startServer([[EchoService.service, echoImplementation(log)]], {
        interceptors: [serverDeadlineInterceptor({ defaultTimeoutMs: 60_000, wheel })],
      });
      running.push(server);
      const client = echoClient(server.address);
      clients.push(client);
      await ready(client);
      wheel.close();
      const { err } = await unary(client, { text: 'x' });
      expect(err?.code).toBe(grpc.status.INTERNAL);
      expect(err?.details).toBe(
        '@tickwheel/grpc: the wheel given to serverDeadlineInterceptor was closed; /tickwheel.test.Echo/Unary cannot be timed',
      );
      expect(log.signals).toHaveLength(0); // the handler never ran
    }, 10_000); // before the fix the call hung and the timer's error escaped as an uncaught exception
  });
});

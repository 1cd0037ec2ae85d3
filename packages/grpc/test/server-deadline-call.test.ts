import { Metadata, status, type ServerInterceptingCallInterface } from '@grpc/grpc-js';
import { createDeadline, currentDeadline, ManualClock, TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { channelListener } from '../../../tests/helpers/channel-listener.js';
import { GRPC_DEADLINE_CHANNEL, GRPC_HANDLER_ABORT_CHANNEL } from '../src/channels.js';
import { DEADLINE_TRAILER, deadlineTrailer, SERVER_DEADLINE_DETAILS } from '../src/details.js';
import { grpcTimeoutValue, TICKWHEEL_TIMEOUT_HEADER } from '../src/grpc-timeout.js';
import { ServerDeadlineCall, type ServerMethodPlan } from '../src/server-deadline-call.js';

const PATH = '/shop.Cart/Checkout';
type Listener = Parameters<ServerInterceptingCallInterface['start']>[0];
type SentStatus = { code: status; details: string; metadata?: Metadata | null };

/** grpc-js's side of the call: records what goes out to the client, and hands back the call's listener. */
class NextCall {
  readonly sent: Array<[string, unknown]> = [];
  listener: Listener | undefined;

  start(listener: Listener): void {
    this.listener = listener;
  }
  sendMetadata(metadata: Metadata): void {
    this.sent.push(['metadata', metadata]);
  }
  sendMessage(message: unknown, callback: () => void): void {
    this.sent.push(['message', message]);
    callback();
  }
  sendStatus(s: SentStatus): void {
    const trailer = s.metadata?.get(DEADLINE_TRAILER) ?? [];
    this.sent.push([
      'status',
      { code: s.code, details: s.details, ...(trailer.length > 0 ? { trailer: trailer[0] } : {}) },
    ]);
  }
  startRead(): void {}
  getPeer(): string {
    return 'peer';
  }
  getDeadline(): number {
    return Infinity;
  }
  getHost(): string {
    return 'host';
  }
}

/** The handler's side: records each event with the deadline it ran under (undefined: none). */
function handler() {
  const events: Array<[string, number | undefined]> = [];
  const seen = (event: string) => () => events.push([event, currentDeadline()?.remaining()]);
  const listener = {
    onReceiveMetadata: seen('metadata'),
    onReceiveMessage: seen('message'),
    onReceiveHalfClose: seen('halfClose'),
    onCancel: seen('cancel'),
  } as unknown as Listener;
  return { events, listener };
}

const wheels: TimingWheel[] = [];
afterEach(() => {
  for (const wheel of wheels.splice(0)) wheel.close();
});

function makeCall(budgetMs: number, plan: Partial<Omit<ServerMethodPlan, 'wheel'>> = {}, arrivedAt = 1_000_000) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  wheels.push(wheel);
  const next = new NextCall();
  const call = new ServerDeadlineCall(
    next as unknown as ServerInterceptingCallInterface,
    { path: PATH, wheel, defaultTimeoutMs: Infinity, maxTimeoutMs: Infinity, requestStream: false, ...plan },
    budgetMs,
    arrivedAt,
  );
  const app = handler();
  call.start(app.listener);
  return { clock, wheel, next, call, app };
}

/** A unary call: headers, then the half-close that starts the handler. */
function arrive(next: NextCall, metadata = new Metadata()): void {
  next.listener!.onReceiveMetadata(metadata);
  next.listener!.onReceiveMessage({ text: 'x' });
  next.listener!.onReceiveHalfClose();
}

/** The status our deadline sends: grpc-js's text, and the limit, budget and method in the trailer. */
function expired(limit: string, budgetMs: number) {
  return [
    'status',
    {
      code: status.DEADLINE_EXCEEDED,
      details: SERVER_DEADLINE_DETAILS,
      trailer: deadlineTrailer(limit, budgetMs, PATH),
    },
  ];
}

describe('server-deadline-call', () => {
  describe('the deadline', () => {
    it('runs a unary handler (it starts at the half-close) inside the client’s deadline', () => {
      const { next, app } = makeCall(500);
      arrive(next);
      expect(app.events).toEqual([
        ['metadata', undefined],
        ['message', undefined],
        ['halfClose', 500],
      ]);
    });

    it('runs every event of a client-streaming or bidi handler inside the deadline', () => {
      const { next, app, clock } = makeCall(500, { requestStream: true });
      next.listener!.onReceiveMetadata(new Metadata());
      clock.advance(100);
      next.listener!.onReceiveMessage('m');
      expect(app.events).toEqual([
        ['metadata', 500],
        ['message', 400],
      ]);
    });

    it('answers DEADLINE_EXCEEDED when it passes, and drops what the handler sends afterwards', () => {
      const { next, call, clock } = makeCall(500);
      arrive(next);
      clock.advance(499);
      expect(next.sent).toEqual([]);
      clock.advance(1);
      expect(next.sent).toEqual([expired('propagated', 500)]);
      call.sendMetadata(new Metadata());
      call.sendMessage('late', () => {});
      call.sendStatus({ code: status.OK, details: '' });
      expect(next.sent).toHaveLength(1);
    });

    it('lets the handler’s status out once and ends the deadline with it', () => {
      const { next, call, clock, wheel } = makeCall(500);
      arrive(next);
      call.sendStatus({ code: status.OK, details: 'done' });
      expect(wheel.size).toBe(0);
      clock.advance(1_000);
      call.sendStatus({ code: status.INTERNAL, details: 'again' });
      expect(next.sent).toEqual([['status', { code: status.OK, details: 'done' }]]);
    });

    it('takes the method’s default for a call that came without a deadline', () => {
      const { next, clock } = makeCall(Infinity, { defaultTimeoutMs: 200 });
      arrive(next);
      clock.advance(200);
      expect(next.sent).toEqual([expired('default', 200)]);
    });

    it('caps the client’s deadline at the method’s max', () => {
      const { next, call, clock } = makeCall(5_000, { maxTimeoutMs: 1_000 }, 70_000);
      arrive(next);
      expect(call.getDeadline()).toBe(71_000);
      clock.advance(1_000);
      expect(next.sent).toEqual([expired('max', 1_000)]);
    });

    it('runs a call with no deadline and no default without a scope or a timer', () => {
      const { next, app, wheel, call } = makeCall(Infinity);
      arrive(next);
      expect(app.events.map(([, remaining]) => remaining)).toEqual([undefined, undefined, undefined]);
      expect(wheel.size).toBe(0);
      expect(call.getDeadline()).toBe(Infinity);
    });

    it('reads a long budget from tickwheel-timeout and hides that header from the handler', () => {
      const metadata = new Metadata();
      metadata.set(TICKWHEEL_TIMEOUT_HEADER, grpcTimeoutValue(300));
      const { next, clock } = makeCall(Infinity, { defaultTimeoutMs: 10_000 });
      arrive(next, metadata);
      expect(metadata.get(TICKWHEEL_TIMEOUT_HEADER)).toEqual([]);
      clock.advance(300);
      expect(next.sent).toEqual([expired('propagated', 300)]);
    });

    it('answers a call whose budget was spent on arrival without running the handler', () => {
      const { next, app } = makeCall(0);
      arrive(next);
      expect(app.events).toEqual([]);
      expect(next.sent).toEqual([expired('propagated', 0)]);
    });
  });

  describe('cancellation', () => {
    it('aborts the handler’s signal with an AbortError when the client cancels, and sends no status', () => {
      const { next, app } = makeCall(500, { requestStream: true });
      let signal: AbortSignal | undefined;
      app.listener.onReceiveMetadata = () => {
        signal = currentDeadline()!.signal;
      };
      next.listener!.onReceiveMetadata(new Metadata());
      next.listener!.onCancel();
      expect(signal!.aborted).toBe(true);
      expect((signal!.reason as DOMException).name).toBe('AbortError');
      expect(app.events).toEqual([['cancel', 500]]); // heard inside its scope; no time passed
      expect(next.sent).toEqual([]);
    });

    it('answers CANCELLED when an enclosing deadline the call inherited is aborted', () => {
      const { next, wheel } = makeCall(500);
      const parent = createDeadline(10_000, { wheel });
      parent.run(() => arrive(next));
      parent.abort(new Error('the parent call was cancelled'));
      expect(next.sent).toHaveLength(1);
      const [, sent] = next.sent[0] as [string, SentStatus];
      expect(sent.code).toBe(status.CANCELLED);
      expect(sent.details).toMatch(/^Cancelled: the deadline this call inherited was aborted/);
      parent.dispose();
    });
  });
  describe('diagnostics', () => {
    const listen = channelListener();

    it('reports the time since its deadline started, also when an earlier enclosing deadline ends it', () => {
      const { next, wheel, clock } = makeCall(1_000);
      const deadlines = listen(GRPC_DEADLINE_CHANNEL);
      const aborts = listen(GRPC_HANDLER_ABORT_CHANNEL);
      clock.advance(7); // the clock does not start at the call's deadline
      const parent = createDeadline(50, { wheel });
      parent.run(() => arrive(next));
      clock.advance(50);
      const [, sent] = next.sent[0] as [string, SentStatus];
      expect(sent.code).toBe(status.DEADLINE_EXCEEDED);
      expect(deadlines).toMatchObject([{ side: 'server', budgetMs: 1_000, elapsedMs: 50 }]);
      expect(aborts).toEqual([{ path: PATH, reason: 'deadline', elapsedMs: 50 }]);
      parent.dispose();
    });

    it('reports the time since its deadline started when the client cancels', () => {
      const { next, clock } = makeCall(1_000);
      const aborts = listen(GRPC_HANDLER_ABORT_CHANNEL);
      clock.advance(5);
      arrive(next);
      clock.advance(12);
      next.listener!.onCancel();
      expect(aborts).toEqual([{ path: PATH, reason: 'client-cancelled', elapsedMs: 12 }]);
    });
  });
});

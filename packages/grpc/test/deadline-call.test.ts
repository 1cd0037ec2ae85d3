import { Metadata, status, type InterceptingListener, type StatusObject } from '@grpc/grpc-js';
import { ManualClock, TimingWheel, type TimerHandle } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { DeadlineCall } from '../src/deadline-call.js';
import { expiredDetails, idleDetails } from '../src/details.js';
import {
  GRPC_TIMEOUT_HEADER,
  MAX_GRPC_TIMEOUT_MS,
  parseGrpcTimeout,
  TICKWHEEL_TIMEOUT_HEADER,
} from '../src/grpc-timeout.js';
import type { DeadlineLimit } from '../src/types.js';
import { GRPC_DEADLINE_CHANNEL, type GrpcDeadlineMessage } from '../src/channels.js';
import { channelListener } from '../../../tests/helpers/channel-listener.js';

const PATH = '/shop.Cart/Checkout';

/** The rest of the interceptor chain: records what the call sends down, and hands back its listener. */
class NextCall {
  readonly sent: Array<[string, ...unknown[]]> = [];
  metadata: Metadata | undefined;
  listener: InterceptingListener | undefined;

  start(metadata: Metadata, listener: InterceptingListener): void {
    this.metadata = metadata;
    this.listener = listener;
  }
  sendMessageWithContext(_context: unknown, message: unknown): void {
    this.sent.push(['message', message]);
  }
  sendMessage(message: unknown): void {
    this.sent.push(['message', message]);
  }
  halfClose(): void {
    this.sent.push(['halfClose']);
  }
  cancelWithStatus(code: status, details: string): void {
    this.sent.push(['cancel', code, details]);
  }
  startRead(): void {}
  getPeer(): string {
    return 'peer';
  }
  getAuthContext(): null {
    return null;
  }
}

/** What reaches the application. */
function appListener() {
  const events: Array<[string, unknown]> = [];
  const listener: Partial<InterceptingListener> = {
    onReceiveMetadata: (metadata) => events.push(['metadata', metadata]),
    onReceiveMessage: (message) => events.push(['message', message]),
    onReceiveStatus: (s: StatusObject) => events.push(['status', s.code]),
  };
  return { events, listener };
}

const wheels: TimingWheel[] = [];
afterEach(() => {
  for (const wheel of wheels.splice(0)) wheel.close();
});

interface CallSpec {
  expiresAt?: number;
  budgetMs?: number;
  idleMs?: number;
  limit?: DeadlineLimit;
  signal?: AbortSignal;
}

function makeCall({ expiresAt = 1_000, budgetMs = expiresAt, idleMs = Infinity, limit = 'method', signal }: CallSpec) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  wheels.push(wheel);
  const next = new NextCall();
  // The method's configured timeout is the budget when `limit` names it; the clock starts at 0.
  const plan = {
    path: PATH,
    timeoutMs: budgetMs,
    timeoutFrom: 'method' as const,
    idleMs,
    reserveMs: 0,
    minBudgetMs: 0,
    retry: undefined,
  };
  // The interceptor took the clock at `expiresAt - budgetMs` (0 for a call with no deadline).
  const takenAt = expiresAt === Infinity ? 0 : expiresAt - budgetMs;
  const call = new DeadlineCall(next, wheel, plan, limit, takenAt, budgetMs, signal, undefined);
  const app = appListener();
  return { clock, wheel, next, call, app };
}

describe('deadline-call', () => {
  const listen = channelListener();
  describe('#start', () => {
    it('sends the time left as grpc-timeout on a copy, leaving the caller’s Metadata as it was', () => {
      const { next, call, app, clock } = makeCall({ expiresAt: 1_250 });
      clock.advance(250);
      const metadata = new Metadata();
      metadata.set('x-user', 'u1');
      call.start(metadata, app.listener);
      expect(next.metadata).not.toBe(metadata);
      expect(parseGrpcTimeout(String(next.metadata!.get(GRPC_TIMEOUT_HEADER)[0]))).toBe(1_000);
      expect(next.metadata!.get('x-user')).toEqual(['u1']);
      expect(metadata.get(GRPC_TIMEOUT_HEADER)).toEqual([]);
    });

    it('sends a budget grpc-js cannot read in tickwheel-timeout instead', () => {
      const { next, call, app } = makeCall({ expiresAt: MAX_GRPC_TIMEOUT_MS + 1_000 });
      call.start(new Metadata(), app.listener);
      expect(next.metadata!.get(GRPC_TIMEOUT_HEADER)).toEqual([]);
      expect(parseGrpcTimeout(String(next.metadata!.get(TICKWHEEL_TIMEOUT_HEADER)[0]))).toBeGreaterThanOrEqual(
        MAX_GRPC_TIMEOUT_MS + 1_000,
      );
    });

    it('keeps a grpc-timeout the caller wrote when it is shorter than the budget, sending the caller’s Metadata untouched', () => {
      const { next, call, app } = makeCall({ expiresAt: 600_000 });
      const metadata = new Metadata();
      metadata.set(GRPC_TIMEOUT_HEADER, '100m');
      call.start(metadata, app.listener);
      expect(next.metadata).toBe(metadata);
      expect(metadata.get(GRPC_TIMEOUT_HEADER)).toEqual(['100m']);
    });

    it('replaces a grpc-timeout the caller wrote when the budget is shorter, on a copy', () => {
      const { next, call, app } = makeCall({ expiresAt: 50 });
      const metadata = new Metadata();
      metadata.set(GRPC_TIMEOUT_HEADER, '10S');
      call.start(metadata, app.listener);
      expect(next.metadata!.get(GRPC_TIMEOUT_HEADER)).toEqual(['50m']);
      expect(metadata.get(GRPC_TIMEOUT_HEADER)).toEqual(['10S']);
    });

    it('passes a malformed grpc-timeout from the caller through untouched, so the server answers as it would bare', () => {
      const { next, call, app, wheel } = makeCall({ expiresAt: 600_000 });
      const metadata = new Metadata();
      metadata.set(GRPC_TIMEOUT_HEADER, 'Infinity');
      call.start(metadata, app.listener);
      expect(next.metadata).toBe(metadata);
      expect(metadata.get(GRPC_TIMEOUT_HEADER)).toEqual(['Infinity']);
      expect(wheel.size).toBe(1);
    });

    it('drops a longer grpc-timeout from the caller when the budget itself goes in tickwheel-timeout', () => {
      const { next, call, app } = makeCall({ expiresAt: MAX_GRPC_TIMEOUT_MS + 1_000 });
      const metadata = new Metadata();
      metadata.set(GRPC_TIMEOUT_HEADER, '99999999H');
      call.start(metadata, app.listener);
      expect(next.metadata!.get(GRPC_TIMEOUT_HEADER)).toEqual([]);
      expect(next.metadata!.get(TICKWHEEL_TIMEOUT_HEADER)).toHaveLength(1);
      expect(metadata.get(GRPC_TIMEOUT_HEADER)).toEqual(['99999999H']);
    });

    it('sends no header, and the caller’s own Metadata, for an idle limit without a deadline', () => {
      const { next, call, app, wheel } = makeCall({ expiresAt: Infinity, idleMs: 100 });
      const metadata = new Metadata();
      call.start(metadata, app.listener);
      expect(next.metadata).toBe(metadata);
      expect(metadata.get(GRPC_TIMEOUT_HEADER)).toEqual([]);
      expect(wheel.size).toBe(1);
    });

    it('arms one wheel handle that keeps the process alive while the call is pending, as grpc-js’s own deadline timer does', () => {
      const { call, app, wheel } = makeCall({ expiresAt: 1_000, idleMs: 100 });
      call.start(new Metadata(), app.listener);
      expect(wheel.size).toBe(1);
      // grpc-js's resolving call arms a ref'ed setTimeout for its deadline (a private field, read on purpose).
      const timer = (call as unknown as { timer: TimerHandle }).timer;
      expect(timer.hasRef()).toBe(true);
      expect(timer.expiresAt).toBe(100);
    });
  });

  describe('deadline', () => {
    it('cancels the call with DEADLINE_EXCEEDED at its deadline, and not a tick before', () => {
      const { next, call, app, clock } = makeCall({ expiresAt: 1_000, limit: 'propagated', budgetMs: 1_000 });
      call.start(new Metadata(), app.listener);
      clock.advance(999);
      expect(next.sent).toEqual([]);
      clock.advance(1);
      expect(next.sent).toEqual([
        [
          'cancel',
          status.DEADLINE_EXCEEDED,
          `${expiredDetails('propagated', 1_000, PATH)}; the deadline of 1000 ms from grpc: 0 ms spent before this call, 1000 ms in it`,
        ],
      ]);
    });

    it('cancels the timer when the status arrives, and passes the status on', () => {
      const { next, call, app, clock, wheel } = makeCall({ expiresAt: 1_000 });
      call.start(new Metadata(), app.listener);
      next.listener!.onReceiveStatus({ code: status.OK, details: '', metadata: new Metadata() });
      expect(wheel.size).toBe(0);
      clock.advance(2_000);
      expect(next.sent).toEqual([]);
      expect(app.events).toEqual([['status', status.OK]]);
    });

    it('publishes an elapsed time counted from when the budget was taken, not from start()', () => {
      const deadlines = listen(GRPC_DEADLINE_CHANNEL) as GrpcDeadlineMessage[];
      const { call, app, clock } = makeCall({ expiresAt: 100, budgetMs: 100 });
      clock.advance(15); // grpc-js starts the call after the interceptor ran (channel resolution)
      call.start(new Metadata(), app.listener);
      clock.advance(85);
      expect(deadlines.map(({ budgetMs, elapsedMs }) => [budgetMs, elapsedMs])).toEqual([[100, 100]]);
    });
  });

  describe('stream idle limit', () => {
    it('cancels a stream that receives nothing for idleMs, naming the idle limit', () => {
      const { next, call, app, clock } = makeCall({ expiresAt: 10_000, idleMs: 100 });
      call.start(new Metadata(), app.listener);
      clock.advance(99);
      next.listener!.onReceiveMessage({ n: 1 });
      clock.advance(99);
      expect(next.sent).toEqual([]);
      clock.advance(1);
      expect(next.sent).toEqual([
        ['cancel', status.DEADLINE_EXCEEDED, `${idleDetails(100, PATH)}; streamIdleMs of 100 ms: 199 ms in this call`],
      ]);
      expect(app.events).toEqual([['message', { n: 1 }]]);
    });

    it('never pushes the timer past the deadline', () => {
      const { next, call, app, clock } = makeCall({ expiresAt: 150, idleMs: 100 });
      call.start(new Metadata(), app.listener);
      clock.advance(90);
      next.listener!.onReceiveMessage('late');
      clock.advance(59);
      expect(next.sent).toEqual([]);
      clock.advance(1);
      expect(next.sent).toEqual([
        [
          'cancel',
          status.DEADLINE_EXCEEDED,
          `${expiredDetails('method', 150, PATH)}; timeoutMs of 150 ms: 150 ms in this call`,
        ],
      ]);
    });
  });

  describe('parent abort', () => {
    it('cancels the call when the ambient deadline it inherited is aborted by a cancel', () => {
      const parent = new AbortController();
      const { next, call, app } = makeCall({ signal: parent.signal });
      call.start(new Metadata(), app.listener);
      parent.abort(new DOMException('client cancelled', 'AbortError'));
      expect(next.sent).toHaveLength(1);
      expect(next.sent[0].slice(0, 2)).toEqual(['cancel', status.CANCELLED]);
      expect(String(next.sent[0][2])).toMatch(/^Cancelled: the deadline this call inherited was aborted/);
    });

    it('leaves a call alone once its status arrived', () => {
      const parent = new AbortController();
      const { next, call, app } = makeCall({ signal: parent.signal });
      call.start(new Metadata(), app.listener);
      next.listener!.onReceiveStatus({ code: status.OK, details: '', metadata: new Metadata() });
      parent.abort();
      expect(next.sent).toEqual([]);
    });
  });

  describe('forwarding', () => {
    it('passes every operation and event straight to its neighbour', () => {
      const { next, call, app } = makeCall({});
      call.start(new Metadata(), app.listener);
      call.sendMessage('a');
      call.sendMessageWithContext({}, 'b');
      call.halfClose();
      call.cancelWithStatus(status.CANCELLED, 'by the app');
      const headers = new Metadata();
      next.listener!.onReceiveMetadata(headers);
      next.listener!.onReceiveMessage('reply');
      expect(next.sent).toEqual([
        ['message', 'a'],
        ['message', 'b'],
        ['halfClose'],
        ['cancel', status.CANCELLED, 'by the app'],
      ]);
      expect(app.events).toEqual([
        ['metadata', headers],
        ['message', 'reply'],
      ]);
    });
  });
});

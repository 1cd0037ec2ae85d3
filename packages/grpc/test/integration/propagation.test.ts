import * as grpc from '@grpc/grpc-js';
import { currentDeadline, ManualClock, TimingWheel, withoutDeadline } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { deadlineInterceptor } from '../../src/deadline-interceptor.js';
import { serverDeadlineInterceptor } from '../../src/server-deadline-interceptor.js';
import { echoImplementation, newLog, nextStart, unary, type EchoReply, type EchoRequest } from '../helpers/echo.js';
import { loopbackPerTest } from '../helpers/loopback.js';

// Two hops on the system clock: client → server A → server B. A's handler calls B with no
// deadline code of its own; the budget the first client set must reach B, and the call must
// end when it runs out, named as propagated in A.

const loopback = loopbackPerTest();

interface Hop {
  /** What A's outgoing call to B ended with. */
  downstream: Promise<{ err: grpc.ServiceError | null; res?: EchoReply }>;
  /** A's ambient remaining budget when its handler started. */
  remainingAtA: number;
}

/**
 * Server A: its handler forwards the request to B through `callB` and answers with B's reply.
 * `serverInterceptors` are A's.
 */
async function startRelay(
  callB: (
    req: EchoRequest,
    parent: grpc.ServerUnaryCall<EchoRequest, EchoReply>,
  ) => Promise<{ err: grpc.ServiceError | null; res?: EchoReply }>,
  serverInterceptors: grpc.ServerInterceptor[],
) {
  const hops: Hop[] = [];
  const relay = await loopback.server(serverInterceptors, {
    Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
      // What A has left as it makes the call: B's budget can be no more (a reading after the
      // call may be a later one, as each call reads the clock afresh).
      const remainingAtA = currentDeadline()?.remaining() ?? -1;
      const downstream = callB(call.request, call);
      hops.push({ downstream, remainingAtA });
      void downstream.then(({ err, res }) => callback(err, res));
    },
  });
  return { relay, hops };
}

describe('propagation', () => {
  it('carries the first client’s budget through server A into server B, and ends the chain when it runs out', async () => {
    const logB = newLog();
    const serverB = await loopback.server([serverDeadlineInterceptor()], echoImplementation(logB));
    const toB = await loopback.client(serverB.address, [deadlineInterceptor({ timeoutMs: 10_000 })]);
    // A's outgoing call: no deadline option, no parent: only the ambient deadline.
    const { relay, hops } = await startRelay((req) => unary(toB, req), [serverDeadlineInterceptor()]);
    const client = await loopback.client(relay.address, [deadlineInterceptor({ timeoutMs: 200 })]);

    const { err, ms } = await unary(client, { text: 'deep', delayMs: -1 });
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    // The client's own limit, or server A's copy of it (grpc-js's text) when the client's timer runs late.
    expect(err?.details).toMatch(
      /^Deadline exceeded( after 200 ms \(default limit\) on \/tickwheel\.test\.Echo\/Unary; timeoutMs of 200 ms: \d+ ms in this call)?$/,
    );
    expect(ms).toBeGreaterThanOrEqual(199);
    expect(ms).toBeLessThan(200 + 1_000);

    expect(hops).toHaveLength(1);
    const remainingAtA = hops[0].remainingAtA;
    expect(remainingAtA).toBeGreaterThan(0);
    expect(remainingAtA).toBeLessThanOrEqual(200);
    expect(logB.started).toEqual(['Unary']);
    expect(logB.remaining[0]).toBeGreaterThan(0);
    expect(logB.remaining[0]).toBeLessThanOrEqual(Math.ceil(remainingAtA));
    // A's deadline and the client's are the same instant: A's outgoing call ends on it, or on
    // the client's cancel when that reaches A first. Either way it ends with the budget.
    const downstream = await hops[0].downstream;
    if (downstream.err?.code === grpc.status.DEADLINE_EXCEEDED) {
      expect(downstream.err.details).toMatch(
        /^Deadline exceeded after \d+ ms \(propagated limit\) on \/tickwheel\.test\.Echo\/Unary; the deadline of \d+ ms from grpc: \d+ ms spent before this call, \d+ ms in it$/,
      );
    } else {
      expect(downstream.err?.code).toBe(grpc.status.CANCELLED);
    }
    const signalB = logB.signals[0]!;
    await new Promise<void>((resolve) =>
      signalB.aborted ? resolve() : signalB.addEventListener('abort', () => resolve()),
    );
    expect(signalB.aborted).toBe(true);
  });

  it('ends the downstream call on server A’s own limit, named as propagated, and tells the client', async () => {
    const logB = newLog();
    const serverB = await loopback.server([serverDeadlineInterceptor()], echoImplementation(logB));
    const toB = await loopback.client(serverB.address, [deadlineInterceptor({ timeoutMs: 10_000 })]);
    const { relay, hops } = await startRelay(
      (req) => unary(toB, req),
      [serverDeadlineInterceptor({ maxTimeoutMs: 100 })],
    );
    const client = await loopback.client(relay.address, [deadlineInterceptor({ timeoutMs: 5_000 })]);

    const { err, ms } = await unary(client, { text: 'deep', delayMs: -1 });
    // A's server limit answers the client; A's outgoing call to B ended on the same budget.
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(ms).toBeGreaterThanOrEqual(99);
    expect(ms).toBeLessThan(100 + 1_000);
    const downstream = await hops[0].downstream;
    expect(downstream.err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(downstream.err?.details).toMatch(
      /^Deadline exceeded after (9\d|100) ms \(propagated limit\) on \/tickwheel\.test\.Echo\/Unary; the deadline of .+$/,
    );
    expect(logB.remaining[0]).toBeLessThanOrEqual(100);
  });

  it('lets a chain that fits in the budget complete, with the remaining budget shrinking hop by hop', async () => {
    const logB = newLog();
    const serverB = await loopback.server([serverDeadlineInterceptor()], echoImplementation(logB));
    const toB = await loopback.client(serverB.address, [deadlineInterceptor()]);
    const { relay, hops } = await startRelay((req) => unary(toB, req), [serverDeadlineInterceptor()]);
    const client = await loopback.client(relay.address, [deadlineInterceptor({ timeoutMs: 5_000 })]);

    const { err, res } = await unary(client, { text: 'ok', delayMs: 0 });
    expect(err).toBeNull();
    expect(res?.text).toBe('ok');
    // B's budget is what A had left, sent on as grpc-timeout (rounded up to whole ms).
    expect(res!.remainingMs).toBeLessThanOrEqual(Math.ceil(hops[0].remainingAtA));
    expect(res!.remainingMs).toBeGreaterThan(1_000);
  });

  it('takes the deadline from the parent call option when the handler has no ambient deadline, on the wheel', async () => {
    // A ManualClock wheel for A's outgoing call: the propagated deadline fires when the test
    // says, well before grpc-js's own timers for the incoming call (which would cancel it).
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const logB = newLog();
    const serverB = await loopback.server([], echoImplementation(logB));
    const toB = await loopback.client(serverB.address, [deadlineInterceptor({ wheel })]);
    // A is a bare grpc-js server: the only deadline its handler has is call.getDeadline().
    let pendingOnWheel = -1;
    const { relay, hops } = await startRelay((req, parent) => {
      const outcome = unary(toB, req, { parent });
      pendingOnWheel = wheel.size;
      return outcome;
    }, []);
    const client = await loopback.client(relay.address);

    const started = nextStart(logB);
    const outcome = unary(client, { text: 'x', delayMs: -1 }, { deadline: Date.now() + 5_000 });
    await started;
    expect(pendingOnWheel).toBe(1);
    clock.advance(4_000);
    expect(wheel.size).toBe(1);
    clock.advance(1_000);
    const downstream = await hops[0].downstream;
    expect(downstream.err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(downstream.err?.details).toMatch(
      /^Deadline exceeded after (4\d\d\d|5000) ms \(propagated limit\) on \/tickwheel\.test\.Echo\/Unary; the deadline of .+$/,
    );
    expect(wheel.size).toBe(0);
    // A answers its client with the error it got.
    expect((await outcome).err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
  });

  it('cancels every call a handler fanned out when its own client cancels, with one listener on the handler’s signal', async () => {
    const FAN_OUT = 20;
    const logB = newLog();
    const serverB = await loopback.server([serverDeadlineInterceptor()], echoImplementation(logB));
    const toB = await loopback.client(serverB.address, [deadlineInterceptor()]);
    const fanned: Array<Promise<{ err: grpc.ServiceError | null }>> = [];
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on('warning', onWarning);
    const { relay } = await startRelay(
      (req) => {
        for (let i = 0; i < FAN_OUT; i++) fanned.push(unary(toB, req));
        return new Promise(() => undefined);
      },
      [serverDeadlineInterceptor({ defaultTimeoutMs: 10_000 })],
    );
    const client = await loopback.client(relay.address);

    const allStarted = new Promise<void>((resolve) => {
      const check = (): void => void (logB.started.length === FAN_OUT ? resolve() : nextStart(logB).then(check));
      check();
    });
    const call = client.Unary({ text: 'x', delayMs: -1 }, {}, () => undefined);
    await allStarted;
    call.cancel();
    const outcomes = await Promise.all(fanned);
    process.off('warning', onWarning);
    expect(outcomes.map((o) => o.err?.code)).toEqual(Array.from({ length: FAN_OUT }, () => grpc.status.CANCELLED));
    expect(warnings).toEqual([]);
  });

  it('leaves a call made inside withoutDeadline() unbounded by the handler’s deadline: a background job outlives the request', async () => {
    const logB = newLog();
    const serverB = await loopback.server([serverDeadlineInterceptor()], echoImplementation(logB));
    const toB = await loopback.client(serverB.address, [deadlineInterceptor()]);
    let background: Promise<{ err: grpc.ServiceError | null; res?: EchoReply }> | undefined;
    let ambientInside: unknown = 'unset';
    const relay = await loopback.server([serverDeadlineInterceptor()], {
      Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
        // Answer now; refresh in the background, longer than the request's whole budget.
        background = withoutDeadline(() => {
          ambientInside = currentDeadline();
          return unary(toB, { text: 'refresh', delayMs: 300 });
        });
        callback(null, { text: call.request.text, remainingMs: currentDeadline()?.remaining() ?? -1 });
      },
    });
    const client = await loopback.client(relay.address, [deadlineInterceptor({ timeoutMs: 100 })]);

    const front = await unary(client, { text: 'x', delayMs: 0 });
    expect(front.err).toBeNull();
    expect(front.res!.remainingMs).toBeGreaterThan(0);
    expect(ambientInside).toBeUndefined();
    const { err, res } = await background!;
    expect(err).toBeNull();
    expect(res?.text).toBe('refresh');
    // B saw no deadline at all: no grpc-timeout was sent.
    expect(logB.remaining[0]).toBe(-1);
  });

  it('keeps reserveMs of the propagated budget for the handler, on the wire to B, but not of an explicit deadline', async () => {
    const logB = newLog();
    const serverB = await loopback.server([serverDeadlineInterceptor()], echoImplementation(logB));
    const toB = await loopback.client(serverB.address, [deadlineInterceptor({ reserveMs: 300 })]);
    let explicitNext = false;
    const { relay, hops } = await startRelay(
      (req) => unary(toB, req, explicitNext ? { deadline: Date.now() + 500 } : {}),
      [serverDeadlineInterceptor()],
    );
    const client = await loopback.client(relay.address, [deadlineInterceptor({ timeoutMs: 2_000 })]);

    const { err, res } = await unary(client, { text: 'reserved', delayMs: 0 });
    expect(err).toBeNull();
    expect(res!.remainingMs).toBeGreaterThan(1_000);
    expect(res!.remainingMs).toBeLessThanOrEqual(Math.ceil(hops[0].remainingAtA) - 300);

    explicitNext = true;
    const second = await unary(client, { text: 'explicit', delayMs: 0 });
    expect(second.err).toBeNull();
    // The caller's own 500 ms, not shortened (B rounds its budget up to whole ms).
    expect(second.res!.remainingMs).toBeGreaterThan(400);
    expect(second.res!.remainingMs).toBeLessThanOrEqual(500);
  });

  it('takes reserveMs off a budget from the parent call option too', async () => {
    const logB = newLog();
    const serverB = await loopback.server([serverDeadlineInterceptor()], echoImplementation(logB));
    const toB = await loopback.client(serverB.address, [deadlineInterceptor({ reserveMs: 250 })]);
    // A is bare grpc-js: its handler's only deadline is the parent call's.
    const { relay } = await startRelay((req, parent) => unary(toB, req, { parent }), []);
    const client = await loopback.client(relay.address);

    const { err, res } = await unary(client, { text: 'p', delayMs: 0 }, { deadline: Date.now() + 2_000 });
    expect(err).toBeNull();
    expect(res!.remainingMs).toBeGreaterThan(1_000);
    expect(res!.remainingMs).toBeLessThanOrEqual(2_000 - 250);
  });

  it('fails a call with less than minBudgetMs left at once: B is never called, A answers in time', async () => {
    const logB = newLog();
    const serverB = await loopback.server([serverDeadlineInterceptor()], echoImplementation(logB));
    const toB = await loopback.client(serverB.address, [deadlineInterceptor({ minBudgetMs: 150 })]);
    const relay = await loopback.server([serverDeadlineInterceptor()], {
      Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
        // Spend most of the 300 ms budget first, then ask B with what is left.
        setTimeout(() => {
          void unary(toB, call.request).then(({ err }) =>
            callback(null, { text: err?.details ?? 'sent', remainingMs: currentDeadline()?.remaining() ?? -1 }),
          );
        }, 200);
      },
    });
    const client = await loopback.client(relay.address, [deadlineInterceptor({ timeoutMs: 300 })]);

    const { err, res } = await unary(client, { text: 'x', delayMs: 0 });
    expect(err).toBeNull();
    expect(res!.text).toMatch(
      /^Deadline exceeded before the call started: \d+ ms left of the propagated budget, below minBudgetMs 150, on \/tickwheel\.test\.Echo\/Unary; the deadline of .+$/,
    );
    expect(res!.remainingMs).toBeGreaterThan(0);
    expect(logB.started).toEqual([]);
  });
});

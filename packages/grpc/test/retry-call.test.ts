import { Metadata, status, type InterceptingListener, type StatusObject } from '@grpc/grpc-js';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClientMethodPlan, InterceptingCallInterface } from '../src/deadline-call.js';
import { perAttemptDetails } from '../src/details.js';
import { GRPC_TIMEOUT_HEADER, parseGrpcTimeout } from '../src/grpc-timeout.js';
import { RetryCall } from '../src/retry-call.js';
import { parseRetry } from '../src/retry-policy.js';
import type { RetryOptions } from '../src/types.js';

const PATH = '/shop.Cart/Get';

/** One attempt's grpc-js call: records what it was sent, and hands back its listener. */
class AttemptCall {
  readonly sent: unknown[] = [];
  metadata: Metadata | undefined;
  listener: InterceptingListener | undefined;
  start(metadata: Metadata, listener: InterceptingListener): void {
    this.metadata = metadata;
    this.listener = listener;
  }
  sendMessageWithContext(_context: unknown, message: unknown): void {
    this.sent.push(message);
  }
  sendMessage(message: unknown): void {
    this.sent.push(message);
  }
  halfClose(): void {
    this.sent.push('halfClose');
  }
  cancelWithStatus(code: status, details: string): void {
    this.sent.push(['cancel', code, details]);
    this.listener?.onReceiveStatus({ code, details, metadata: new Metadata() });
  }
  startRead(): void {}
  getPeer(): string {
    return 'peer';
  }
  getAuthContext(): null {
    return null;
  }
}

const wheels: TimingWheel[] = [];
afterEach(() => {
  for (const wheel of wheels.splice(0)) wheel.close();
});

function makeCall(retry: RetryOptions, budgetMs = 1_000) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  wheels.push(wheel);
  const attempts: AttemptCall[] = [];
  const plan = parseRetry({ ...retry, backoff: { jitter: 0, ...retry.backoff } }, 'retry');
  const method: ClientMethodPlan = {
    path: PATH,
    timeoutMs: budgetMs,
    timeoutFrom: 'default',
    idleMs: Infinity,
    reserveMs: 0,
    minBudgetMs: 0,
    retry: plan,
  };
  const next = (): InterceptingCallInterface => {
    const call = new AttemptCall();
    attempts.push(call);
    return call;
  };
  const call = new RetryCall(next, wheel, method, plan, 'default', 0, budgetMs, undefined, undefined);
  const statuses: StatusObject[] = [];
  call.start(new Metadata(), { onReceiveStatus: (s) => statuses.push(s) });
  call.sendMessage('request');
  call.halfClose();
  return { clock, wheel, call, attempts, statuses };
}

const answer = (attempt: AttemptCall, code: status, details = ''): void =>
  attempt.listener!.onReceiveStatus({ code, details, metadata: new Metadata() });

describe('retry-call', () => {
  it('replays the request on the next attempt after the backoff, saying how many went before', () => {
    const { clock, attempts, statuses } = makeCall({ limit: 2, backoff: { initialMs: 100 } });
    answer(attempts[0], status.UNAVAILABLE);
    expect(attempts).toHaveLength(1);
    clock.advance(99);
    expect(attempts).toHaveLength(1);
    clock.advance(1);
    expect(attempts).toHaveLength(2);
    expect(attempts[1].sent).toEqual(['request', 'halfClose']);
    expect(attempts[1].metadata!.get('grpc-previous-rpc-attempts')).toEqual(['1']);
    answer(attempts[1], status.OK);
    expect(statuses.map((s) => s.code)).toEqual([status.OK]);
  });

  it('ends with the last status after limit retries', () => {
    const { clock, attempts, statuses, wheel } = makeCall({ limit: 1, backoff: { initialMs: 10 } });
    answer(attempts[0], status.UNAVAILABLE, 'first');
    clock.advance(10);
    answer(attempts[1], status.UNAVAILABLE, 'second');
    expect(attempts).toHaveLength(2);
    expect(statuses.map((s) => s.details)).toEqual(['second']);
    expect(wheel.size).toBe(0);
  });

  it('does not retry a status that is not listed, nor an attempt that received headers', () => {
    const first = makeCall({ limit: 3 });
    answer(first.attempts[0], status.INTERNAL);
    expect(first.statuses.map((s) => s.code)).toEqual([status.INTERNAL]);

    const second = makeCall({ limit: 3 });
    second.attempts[0].listener!.onReceiveMetadata(new Metadata());
    answer(second.attempts[0], status.UNAVAILABLE);
    expect(second.statuses.map((s) => s.code)).toEqual([status.UNAVAILABLE]);
    expect(second.attempts).toHaveLength(1);
  });

  it('ends an attempt without headers at perAttemptMs, sends each attempt the smaller of perAttemptMs and what is left', () => {
    const { clock, attempts, statuses } = makeCall(
      { limit: 3, perAttemptMs: 400, statusCodes: ['DEADLINE_EXCEEDED'], backoff: { initialMs: 50, multiplier: 1 } },
      1_000,
    );
    expect(parseGrpcTimeout(String(attempts[0].metadata!.get(GRPC_TIMEOUT_HEADER)[0]))).toBe(400);
    clock.advance(400);
    expect(attempts[0].sent.at(-1)).toEqual(['cancel', status.DEADLINE_EXCEEDED, perAttemptDetails(400, 1, PATH)]);
    clock.advance(50);
    expect(parseGrpcTimeout(String(attempts[1].metadata!.get(GRPC_TIMEOUT_HEADER)[0]))).toBe(400);
    clock.advance(400);
    clock.advance(50);
    // 900 ms gone: the third attempt gets the 100 ms left, not 400.
    expect(parseGrpcTimeout(String(attempts[2].metadata!.get(GRPC_TIMEOUT_HEADER)[0]))).toBe(100);
    clock.advance(100);
    expect(statuses).toHaveLength(1);
    expect(statuses[0].code).toBe(status.DEADLINE_EXCEEDED);
    expect(statuses[0].details).toBe(
      'Deadline exceeded after 1000 ms (default limit) on /shop.Cart/Get; timeoutMs of 1000 ms: 1000 ms in this call',
    );
  });

  it('makes no retry whose backoff would end at or after the deadline', () => {
    const { clock, attempts, statuses } = makeCall({ limit: 5, backoff: { initialMs: 300, multiplier: 1 } }, 500);
    answer(attempts[0], status.UNAVAILABLE, 'one');
    clock.advance(300);
    answer(attempts[1], status.UNAVAILABLE, 'two');
    expect(attempts).toHaveLength(2);
    expect(statuses.map((s) => s.details)).toEqual(['two']);
  });

  it('ends a call cancelled during a backoff at once, with no further attempt', () => {
    const { clock, call, attempts, statuses, wheel } = makeCall({ limit: 2, backoff: { initialMs: 100 } });
    answer(attempts[0], status.UNAVAILABLE);
    call.cancelWithStatus(status.CANCELLED, 'Cancelled on client');
    clock.advance(1_000);
    expect(attempts).toHaveLength(1);
    expect(statuses.map((s) => s.code)).toEqual([status.CANCELLED]);
    expect(wheel.size).toBe(0);
  });
});

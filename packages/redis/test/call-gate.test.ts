import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CallGate } from '../src/call-gate.js';

/** A call that stays in flight until the test settles it. */
function pending<T = string>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const answered = (error: unknown) => !(error instanceof Error && error.message === 'unavailable');
const unavailable = () => new Error('waited out');

describe('CallGate', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs at most its limit of calls at once, the others in the order they came', async () => {
    const gate = new CallGate(2);
    const calls = [pending(), pending(), pending(), pending()];
    const started: number[] = [];
    const results = calls.map((c, i) =>
      gate.run(
        () => {
          started.push(i);
          return c.promise;
        },
        20_000,
        answered,
        unavailable,
      ),
    );
    expect([started, gate.queued]).toEqual([[0, 1], 2]);
    calls[1].resolve('b');
    await expect(results[1]).resolves.toBe('b');
    expect(started).toEqual([0, 1, 2]);
    calls[0].reject(new Error('ERR own error'));
    await expect(results[0]).rejects.toThrow('ERR own error');
    expect([started, gate.queued]).toEqual([[0, 1, 2, 3], 0]);
    calls[2].resolve('c');
    calls[3].resolve('d');
    await expect(Promise.all(results.slice(2))).resolves.toEqual(['c', 'd']);
  });

  it('runs a call without a budget at once, past the gate', async () => {
    const gate = new CallGate(1);
    const first = pending();
    void gate.run(() => first.promise, 20_000, answered, unavailable);
    const budgets: number[] = [];
    const second = gate.run(
      (budgetMs) => {
        budgets.push(budgetMs);
        return Promise.resolve('now');
      },
      0,
      answered,
      unavailable,
    );
    await expect(second).resolves.toBe('now');
    expect(budgets).toEqual([0]);
    first.resolve('x');
  });

  it('fails a waiting call once its budget passed with no call answered, not before', async () => {
    const gate = new CallGate(1);
    const stuck = pending();
    const head = gate.run(() => stuck.promise, 20_000, answered, unavailable);
    let ran = false;
    const waiting = gate.run(
      () => {
        ran = true;
        return Promise.resolve('late');
      },
      20_000,
      answered,
      unavailable,
    );
    const outcome = waiting.then(
      () => 'resolved',
      (error: unknown) => (error as Error).message,
    );
    await vi.advanceTimersByTimeAsync(19_999);
    expect(gate.queued).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toBe('waited out');
    expect(gate.queued).toBe(0);
    // The call in flight failing for want of Redis is no answer: nothing waits, nothing more runs.
    stuck.reject(new Error('unavailable'));
    await expect(head).rejects.toThrow('unavailable');
    expect(ran).toBe(false);
  });

  it("counts a waiting call's budget from the last answer and runs it with what is left", async () => {
    const gate = new CallGate(1);
    const first = pending();
    const second = pending();
    void gate.run(() => first.promise, 20_000, answered, unavailable);
    const results = gate.run(() => second.promise, 20_000, answered, unavailable);
    const budgets: number[] = [];
    const third = gate.run(
      (budgetMs) => {
        budgets.push(budgetMs);
        return Promise.resolve('third');
      },
      20_000,
      answered,
      unavailable,
    );
    await vi.advanceTimersByTimeAsync(15_000);
    first.resolve('first'); // an answer at 15 s: the waiting calls' budgets start again from there
    await vi.advanceTimersByTimeAsync(19_000);
    expect(gate.queued).toBe(1);
    second.resolve('second');
    await expect(results).resolves.toBe('second');
    await expect(third).resolves.toBe('third');
    // Its budget counted from the answer at 19 s + 15 s = 34 s.
    expect(budgets).toEqual([20_000]);
  });
});

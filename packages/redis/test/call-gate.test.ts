import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel } from '@tickwheel/core';
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

/** Lets the promise jobs queued so far run (settled calls reach the gate, the gate starts the next). */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('CallGate', () => {
  // The gate waits on its wheel's clock only: a ManualClock moves it, no fake timers, no sleeps.
  let clock: ManualClock;
  let wheel: TimingWheel;
  /** Lets settled calls reach the gate, moves the clock by `ms` (firing the gate's timer), lets the jobs run. */
  const advance = async (ms: number) => {
    await flush();
    clock.advance(ms);
    await flush();
  };
  beforeEach(() => {
    clock = new ManualClock(0);
    wheel = new TimingWheel({ clock });
  });
  afterEach(() => {
    wheel.close();
  });

  it('runs at most its limit of calls at once, the others in the order they came', async () => {
    const gate = new CallGate(wheel, 2);
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
    const gate = new CallGate(wheel, 1);
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
    const gate = new CallGate(wheel, 1);
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
    await advance(19_999);
    expect([gate.queued, wheel.size]).toEqual([1, 1]); // one timer, for the oldest waiter
    await advance(1);
    expect(await outcome).toBe('waited out');
    expect(wheel.size).toBe(0);
    expect(gate.queued).toBe(0);
    // The call in flight failing for want of Redis is no answer: nothing waits, nothing more runs.
    stuck.reject(new Error('unavailable'));
    await expect(head).rejects.toThrow('unavailable');
    expect(ran).toBe(false);
  });

  it("counts a waiting call's budget from the last answer and runs it with what is left", async () => {
    const gate = new CallGate(wheel, 1);
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
    await advance(15_000);
    first.resolve('first'); // an answer at 15 s: the waiting calls' budgets start again from there
    await advance(19_000);
    expect(gate.queued).toBe(1);
    second.resolve('second');
    await expect(results).resolves.toBe('second');
    await expect(third).resolves.toBe('third');
    // Its budget counted from the answer at 19 s + 15 s = 34 s.
    expect(budgets).toEqual([20_000]);
  });

  it('runs a waiting call with what is left of its budget, read on the wheel clock', async () => {
    const gate = new CallGate(wheel, 1);
    const head = pending();
    const first = gate.run(() => head.promise, 20_000, answered, unavailable);
    const budgets: number[] = [];
    const next = gate.run(
      (budgetMs) => {
        budgets.push(budgetMs);
        return Promise.resolve('next');
      },
      20_000,
      answered,
      unavailable,
    );
    await advance(7_250);
    head.reject(new Error('unavailable')); // no answer: the budget still counts from the arrival at 0
    await expect(first).rejects.toThrow('unavailable');
    await expect(next).resolves.toBe('next');
    expect(budgets).toEqual([12_750]);
    expect(wheel.size).toBe(0); // the gate's timer went with its last waiter
  });

  it('fails the waiters in arrival order as their budgets pass, with one timer at a time', async () => {
    const gate = new CallGate(wheel, 1);
    const stuck = pending();
    void gate.run(() => stuck.promise, 1_000, answered, unavailable).catch(() => undefined);
    const failed: [number, number][] = [];
    const waiters = [0, 1, 2].map((i) =>
      gate
        .run(() => Promise.resolve(i), 1_000, answered, unavailable)
        .catch(() => {
          failed.push([i, clock.now()]);
        }),
    );
    await advance(300);
    const late = gate
      .run(() => Promise.resolve(3), 1_000, answered, unavailable)
      .catch(() => {
        failed.push([3, clock.now()]);
      });
    expect([gate.queued, wheel.size]).toEqual([4, 1]);
    await advance(699);
    expect(failed).toEqual([]);
    await advance(1);
    await Promise.all(waiters);
    expect(failed).toEqual([
      [0, 1_000],
      [1, 1_000],
      [2, 1_000],
    ]);
    expect([gate.queued, wheel.size]).toEqual([1, 1]);
    await advance(300);
    await late;
    expect(failed[3]).toEqual([3, 1_300]);
    expect([gate.queued, wheel.size]).toEqual([0, 0]);
    stuck.reject(new Error('unavailable'));
  });
});

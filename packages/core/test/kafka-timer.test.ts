/**
 * Apache Kafka's own timer tests (server-common/src/test/java/org/apache/kafka/server/util/timer/:
 * TimerTest, TimerTaskListTest, SystemTimerReaperTest), translated to this wheel. Kafka's
 * `SystemTimer` is driven by `advanceClock(timeoutMs)` from a reaper thread; the equivalents here
 * are a `ManualClock` stepped with `runNext()`/`advance()`, and the system clock with its one
 * native timer. Differences on purpose are stated next to the assertion.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel, type TimerHandle } from '../src/index.js';

function manualWheel(wheelSize: number) {
  const clock = new ManualClock(0);
  // Kafka builds its test timer with tickMs 1 and wheelSize 3; a wheel here needs a power of two
  // (slots are bit fields), so the tests run with the sizes either side of 3.
  return { clock, wheel: new TimingWheel({ clock, tickMs: 1, wheelSize }) };
}

describe('Kafka TimerTest', () => {
  for (const wheelSize of [2, 4]) {
    it(`testAlreadyExpiredTask: tasks already expired run on the next pass (wheelSize ${wheelSize})`, () => {
      const { clock, wheel } = manualWheel(wheelSize);
      clock.advance(10);
      const output: number[] = [];
      // Kafka passes negative delays; here `schedule` refuses them (a negative delay is a bug at the
      // call site) and an expiry in the past is said with scheduleAt.
      for (let i = -5; i < 0; i++) wheel.scheduleAt(clock.now() + i, () => output.push(i));
      expect(() => wheel.schedule(-1, () => undefined)).toThrow(RangeError);
      clock.advance(0);
      expect(new Set(output)).toEqual(new Set([-5, -4, -3, -2, -1]));
    });

    it(`testTaskExpiration: every task fires, same-delay pairs both, none early (wheelSize ${wheelSize})`, () => {
      const { clock, wheel } = manualWheel(wheelSize);
      const output: number[] = [];
      const ids: number[] = [];
      const early: number[] = [];
      const add = (delay: number) => {
        ids.push(delay);
        wheel.schedule(delay, (h) => {
          output.push(delay);
          if (clock.now() < h.expiresAt || clock.now() < delay) early.push(delay);
        });
      };
      for (let i = 0; i < 5; i++) add(i);
      for (let i = 10; i < 100; i++) {
        add(i);
        add(i);
      }
      for (let i = 100; i < 500; i++) add(i);
      // Kafka: `while (timer.advanceClock(2000)) {}`, each call handling the next bucket.
      let steps = 0;
      while (clock.runNext()) steps++;
      expect(steps).toBeLessThanOrEqual(ids.length);
      expect([...output].sort((a, b) => a - b)).toEqual(ids);
      expect(early).toEqual([]);
      expect(wheel.size).toBe(0);
    });
  }

  it('testTaskExpiration on the system clock: tasks fire in due order, same-delay pairs both, none early', async () => {
    const wheel = new TimingWheel();
    const fired: Array<[number, number, number]> = [];
    const start = performance.now();
    await new Promise<void>((resolve) => {
      let left = 0;
      for (const delay of [0, 3, 10, 10, 25, 25, 60, 99, 100, 140, 200]) {
        left++;
        wheel.schedule(delay, (h) => {
          fired.push([delay, performance.now(), h.expiresAt]);
          if (--left === 0) resolve();
        });
      }
    });
    wheel.close();
    expect(fired.map(([d]) => d)).toEqual([0, 3, 10, 10, 25, 25, 60, 99, 100, 140, 200]);
    for (const [delay, at, expiresAt] of fired) {
      expect(at).toBeGreaterThanOrEqual(expiresAt);
      expect(at - start).toBeGreaterThanOrEqual(delay - 1);
    }
  }, 10_000);
});

describe('Kafka TimerTaskListTest', () => {
  it('testAll: moving tasks between buckets keeps the shared count, cancelling empties them', () => {
    // A TimerTaskList is a bucket and the shared counter the timer's size. Re-adding a task to
    // another list moves it; here that is `refresh()` to another expiry.
    const { clock, wheel } = manualWheel(64);
    const inList = (expiresAt: number, tasks: TimerHandle[]) =>
      tasks.filter((t) => t.pending && t.expiresAt === expiresAt).length;
    const tasks: TimerHandle[] = [];
    for (let i = 1; i <= 10; i++) {
      tasks.push(wheel.schedule(10, () => undefined));
      expect(wheel.size).toBe(i);
    }
    for (const task of tasks.slice(0, 4)) {
      const before = wheel.size;
      task.refresh(20);
      expect(wheel.size).toBe(before);
    }
    expect(inList(10, tasks)).toBe(6);
    expect(inList(20, tasks)).toBe(4);
    for (const task of tasks.slice(4)) task.refresh(30);
    expect([inList(10, tasks), inList(20, tasks), inList(30, tasks)]).toEqual([0, 4, 6]);
    expect(wheel.size).toBe(10);
    for (const task of tasks.filter((t) => t.expiresAt === 20)) task.cancel();
    expect([inList(20, tasks), inList(30, tasks), wheel.size]).toEqual([0, 6, 6]);
    for (const task of tasks) task.cancel();
    expect(wheel.size).toBe(0);
    clock.advance(100);
    expect(wheel.stats().fired).toBe(0);
  });

  it('testGetDelay: the delay left is the expiry minus the time passed', () => {
    const { clock, wheel } = manualWheel(64);
    const task = wheel.schedule(10_000, () => undefined);
    clock.advance(5_000);
    expect(task.remaining()).toBe(5_000);
  });
});

describe('Kafka SystemTimerReaperTest', () => {
  it('testReaper: timed-out futures fail with a timeout, in order', async () => {
    const wheel = new TimingWheel();
    const order: number[] = [];
    const add = (delayMs: number) =>
      new Promise<never>((_, reject) => {
        wheel.schedule(delayMs, () => {
          order.push(delayMs);
          reject(new Error(`Future failed to be completed before timeout of ${delayMs} ms was reached`));
        });
      });
    const results = await Promise.allSettled([add(100), add(200), add(300)]);
    wheel.close();
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(order).toEqual([100, 200, 300]);
  }, 10_000);

  it('testReaperClose: close() stops the timer and releases its native timer', () => {
    const wheel = new TimingWheel();
    const handle = wheel.schedule(60_000, () => undefined);
    wheel.close();
    expect(wheel.isClosed).toBe(true);
    expect(handle.state).toBe('cancelled');
    expect(wheel.stats().pending).toBe(0);
    expect(() => wheel.schedule(1, () => undefined)).toThrow(/closed/);
    expect(() => wheel.close()).not.toThrow();
  });
});

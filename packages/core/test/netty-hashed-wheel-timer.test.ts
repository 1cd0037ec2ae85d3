/**
 * Netty's HashedWheelTimerTest (common/src/test/java/io/netty/util/HashedWheelTimerTest.java),
 * translated. Netty's timer thread ticks every `tickDuration`; `stop()` is `close()` here (which
 * cancels what is pending instead of returning it), `pendingTimeouts()` is `size`. The tests
 * that wait on real time do so on a `ManualClock` where the wait itself is not what is tested.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel, type TimerHandle } from '../src/index.js';

const noop = (): void => undefined;

describe('Netty HashedWheelTimerTest', () => {
  it('testScheduleTimeoutShouldNotRunBeforeDelay', () => {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    let ran = false;
    const timeout = wheel.schedule(10_000, () => (ran = true));
    clock.advance(3_000);
    expect(ran).toBe(false);
    expect(timeout.state).toBe('pending');
    clock.advance(6_999);
    expect(ran).toBe(false);
  });

  it('testScheduleTimeoutShouldRunAfterDelay (system clock)', async () => {
    const wheel = new TimingWheel();
    const start = performance.now();
    const timeout = await new Promise<TimerHandle>((resolve) => wheel.schedule(20, resolve));
    expect(performance.now() - start).toBeGreaterThanOrEqual(19);
    expect(timeout.state).toBe('fired');
    wheel.close();
  }, 5_000);

  it('testStopTimer: nothing is left after the timeouts ran; close() cancels the rest', async () => {
    const processed = new TimingWheel();
    await Promise.all([1, 1, 1].map((d) => new Promise((resolve) => processed.schedule(d, resolve))));
    expect(processed.size).toBe(0);
    processed.close();

    const unprocessed = new TimingWheel();
    const handles = Array.from({ length: 5 }, () => unprocessed.schedule(5_000, noop));
    expect(unprocessed.size).toBe(5);
    unprocessed.close();
    // Netty's stop() returns the unprocessed timeouts; close() cancels them (testStopTimerCancelsPendingTasks).
    expect(handles.every((h) => h.state === 'cancelled')).toBe(true);
  }, 3_000);

  it('testTimerShouldThrowExceptionAfterShutdownForNewTimeouts', () => {
    const wheel = new TimingWheel({ clock: new ManualClock() });
    wheel.close();
    expect(() => wheel.schedule(1, noop)).toThrow(/closed/);
    expect(() => wheel.scheduleAt(1, noop)).toThrow(/closed/);
  });

  it('testTimerOverflowWheelLength: a task re-adding itself every 100 ms keeps running past a full turn', () => {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock, tickMs: 100, wheelSize: 32 });
    let runs = 0;
    const task = (): void => {
      runs++;
      wheel.schedule(100, task);
    };
    wheel.schedule(100, task);
    clock.advance(100 * 32 * 3);
    expect(runs).toBe(96);
    expect(wheel.size).toBe(1);
  });

  it('testExecutionOnTime: with a 200 ms tick, 100 000 timeouts of 125 ms fire in [125, 2 * (200 + 125))', () => {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock, tickMs: 200 });
    const delays: number[] = [];
    for (let i = 0; i < 100_000; i++) {
      const start = clock.now();
      wheel.schedule(125, () => delays.push(clock.now() - start));
      if (i % 1000 === 999) clock.advance(1); // the tasks are added over time, as Netty's loop does
    }
    clock.advance(1_000);
    expect(delays).toHaveLength(100_000);
    expect(delays.reduce((a, b) => Math.min(a, b))).toBeGreaterThanOrEqual(125);
    expect(delays.reduce((a, b) => Math.max(a, b))).toBeLessThan(2 * (200 + 125));
  });

  it('testExecutionOnTime on the system clock: 10 000 timeouts of 50 ms, none early', async () => {
    const wheel = new TimingWheel({ tickMs: 20 });
    const delays: number[] = [];
    await new Promise<void>((resolve) => {
      // Netty measures each delay from its own newTimeout call. Here a delay counts from the job's
      // clock reading (the clock contract in timing-wheel.ts), taken at the first schedule of this
      // loop, so the delays are measured from just before the loop.
      const start = performance.now();
      for (let i = 0; i < 10_000; i++) {
        wheel.schedule(50, () => {
          delays.push(performance.now() - start);
          if (delays.length === 10_000) resolve();
        });
      }
    });
    wheel.close();
    expect(delays.reduce((a, b) => Math.min(a, b))).toBeGreaterThanOrEqual(50 - 1);
  }, 10_000);

  it('reportPendingTimeouts: the count follows schedule, fire and cancel', () => {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const t1 = wheel.schedule(100 * 60_000, noop);
    const t2 = wheel.schedule(100 * 60_000, noop);
    wheel.schedule(90, noop);
    expect(wheel.size).toBe(3);
    clock.advance(90);
    t1.cancel();
    t2.cancel();
    expect(wheel.size).toBe(0);
  });

  it('testOverflow: a Long.MAX_VALUE delay never fires and can be cancelled', () => {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    let ran = false;
    // Long.MAX_VALUE ms (2^63 - 1, which a double holds as 2^63) is above MAX_DELAY_MS (2^53):
    // such a timer never fires, by design.
    const timeout = wheel.schedule(2 ** 63, () => (ran = true));
    clock.advance(1_000);
    clock.advance(Number.MAX_VALUE / 2);
    expect(ran).toBe(false);
    expect(timeout.pending).toBe(true);
    expect(timeout.cancel()).toBe(true);
    expect(wheel.size).toBe(0);
  });

  it('cancelWillCallCallback: cancel reports to the caller at once (no separate cancelled callback)', () => {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    let ran = false;
    const t1 = wheel.schedule(90, () => (ran = true));
    expect(wheel.size).toBe(1);
    // Netty calls TimerTask.cancelled() on its worker thread; here cancel() is synchronous and
    // its return value is the notification.
    expect(t1.cancel()).toBe(true);
    expect(t1.state).toBe('cancelled');
    clock.advance(100);
    expect(ran).toBe(false);
  });

  it('testPendingTimeoutsShouldBeCountedCorrectlyWhenTimeoutCancelledWithinGoalTick', () => {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const timeouts: TimerHandle[] = [];
    // 11 timeouts due in the same tick; the first cancels the other 10 while their tick is firing.
    wheel.schedule(200, () => {
      for (const t of timeouts) t.cancel();
    });
    for (let i = 0; i < 10; i++) timeouts.push(wheel.schedule(200, noop));
    clock.advance(200);
    expect(wheel.size).toBe(0);
    expect(wheel.stats().fired).toBe(1);
    expect(wheel.stats().cancelled).toBe(10);
  });
});

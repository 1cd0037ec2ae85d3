import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel, type TimerHandle } from '../src/index.js';
import { scheduleTask, scheduleTaskAt, type TimerTask } from '../src/internal.js';

function manualWheel() {
  const clock = new ManualClock(0);
  return { clock, wheel: new TimingWheel({ clock }) };
}

/** A task that records what the wheel called it with. */
class Recorder implements TimerTask {
  readonly calls: Array<{ self: unknown; handle: TimerHandle; at: number }> = [];
  constructor(private readonly clock: ManualClock) {}
  timerFired(handle: TimerHandle): void {
    this.calls.push({ self: this, handle, at: this.clock.now() });
  }
}

/** A wheel as another copy of core without a task path would have it. */
function wheelWithoutTaskPath(wheel: TimingWheel): TimingWheel {
  Object.defineProperty(wheel, '_scheduleTask', { value: undefined });
  Object.defineProperty(wheel, '_scheduleTaskAt', { value: undefined });
  return wheel;
}

describe('timer tasks (core/internal)', () => {
  it('scheduleTask calls task.timerFired with its handle, on the task, once its delay passes', () => {
    const { clock, wheel } = manualWheel();
    const task = new Recorder(clock);
    const handle = scheduleTask(wheel, 10, task);
    expect(handle.pending).toBe(true);
    expect(handle.expiresAt).toBe(10);
    clock.advance(9);
    expect(task.calls).toHaveLength(0);
    clock.advance(1);
    expect(task.calls).toEqual([{ self: task, handle, at: 10 }]);
    expect(handle.state).toBe('fired');
    expect(wheel.size).toBe(0);
  });

  it('scheduleTaskAt fires at an absolute time, and a past time on the next pass', () => {
    const { clock, wheel } = manualWheel();
    clock.advance(100);
    const task = new Recorder(clock);
    const handle = scheduleTaskAt(wheel, 150, task);
    const late = scheduleTaskAt(wheel, 50, task);
    expect(handle.delayMs).toBe(50);
    clock.advance(1);
    expect(task.calls.map((c) => c.handle)).toEqual([late]);
    clock.advance(49);
    expect(task.calls.map((c) => c.handle)).toEqual([late, handle]);
  });

  it('a task handle cancels, refreshes, unrefs and re-arms from timerFired like a callback handle', () => {
    const { clock, wheel } = manualWheel();
    const fired: number[] = [];
    let rounds = 0;
    const task: TimerTask = {
      timerFired(handle) {
        fired.push(clock.now());
        if (++rounds < 3) handle.refresh(5);
      },
    };
    const cancelled = scheduleTask(wheel, 5, task);
    expect(cancelled.cancel()).toBe(true);
    const handle = scheduleTask(wheel, 10, task).unref();
    expect(handle.hasRef()).toBe(false);
    handle.refresh(20);
    clock.advance(100);
    expect(fired).toEqual([20, 25, 30]);
    expect(wheel.stats()).toMatchObject({ cancelled: 1, fired: 3 });
  });

  it('reports a throwing task to onError with its handle, and the other timers still fire', () => {
    const clock = new ManualClock(0);
    const errors: Array<[unknown, TimerHandle]> = [];
    const wheel = new TimingWheel({ clock, onError: (error, handle) => errors.push([error, handle]) });
    const boom = new Error('boom');
    const handle = scheduleTask(wheel, 1, {
      timerFired() {
        throw boom;
      },
    });
    const after = new Recorder(clock);
    scheduleTask(wheel, 1, after);
    clock.advance(1);
    expect(errors).toEqual([[boom, handle]]);
    expect(after.calls).toHaveLength(1);
  });

  it('checks the delay and the wheel as schedule() and scheduleAt() do', () => {
    const { clock, wheel } = manualWheel();
    const task = new Recorder(clock);
    expect(() => scheduleTask(wheel, -1, task)).toThrow(RangeError);
    expect(() => scheduleTask(wheel, Number.NaN, task)).toThrow(/delayMs/);
    expect(() => scheduleTaskAt(wheel, Number.POSITIVE_INFINITY, task)).toThrow(/timeMs/);
    expect(wheel.size).toBe(0);
    wheel.close();
    expect(() => scheduleTask(wheel, 1, task)).toThrow(/closed/);
    expect(() => scheduleTaskAt(wheel, 1, task)).toThrow(/closed/);
  });

  it('keeps the public schedule() to functions: an object with timerFired is refused', () => {
    const { clock, wheel } = manualWheel();
    const task = new Recorder(clock);
    expect(() => wheel.schedule(1, task as never)).toThrow(/callback must be a function/);
    expect(() => wheel.scheduleAt(1, task as never)).toThrow(/callback must be a function/);
  });

  it('falls back to a callback on a wheel without the task path (another copy of core)', () => {
    const { clock, wheel } = manualWheel();
    const old = wheelWithoutTaskPath(wheel);
    const task = new Recorder(clock);
    const a = scheduleTask(old, 5, task);
    const b = scheduleTaskAt(old, 7, task);
    clock.advance(10);
    expect(task.calls.map((c) => [c.self, c.handle, c.at])).toEqual([
      [task, a, 5],
      [task, b, 7],
    ]);
  });
});

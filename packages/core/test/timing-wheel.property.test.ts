import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel, type TimerHandle } from '../src/index.js';

/**
 * Random sequences of schedule, cancel, refresh and advance, with callbacks that schedule,
 * cancel and refresh, checked against a reference model: a plain list of timers with their
 * expiry and whether they are pending.
 */

type Action =
  | { kind: 'none' }
  | { kind: 'schedule'; delay: number }
  | { kind: 'cancel'; target: number }
  | { kind: 'refresh'; target: number; delay: number };

type Op =
  | { kind: 'schedule'; delay: number; action: Action }
  | { kind: 'cancel'; target: number }
  | { kind: 'refresh'; target: number; delay: number | undefined }
  | { kind: 'advance'; ms: number };

interface ModelTimer {
  handle: TimerHandle;
  expiresAt: number;
  pending: boolean;
  fires: number;
  action: Action;
}

const delayArb = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: 0, max: 200 }) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 100_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 ** 33 }) },
);
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('schedule' as const), delay: delayArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), target: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('refresh' as const), target: fc.nat(), delay: delayArb }) },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('schedule' as const), delay: delayArb, action: actionArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), target: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('refresh' as const), target: fc.nat(), delay: fc.option(delayArb, { nil: undefined }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 2 ** 34 })) }) },
);

function check(tickMs: number, wheelSize: number, ops: Op[]): void {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock, tickMs, wheelSize });
  const timers: ModelTimer[] = [];
  const boundary = (t: number) => Math.ceil(t / tickMs) * tickMs;
  const pick = (n: number) => (timers.length === 0 ? undefined : timers[n % timers.length]);

  const schedule = (delay: number, action: Action): void => {
    const timer: ModelTimer = { handle: undefined as never, expiresAt: clock.now() + delay, pending: true, fires: 0, action };
    timer.handle = wheel.schedule(delay, (h) => {
      // The firing rule: never early, exactly at the first tick boundary at or after expiry.
      expect(timer.pending).toBe(true);
      expect(h).toBe(timer.handle);
      expect(clock.now()).toBe(boundary(timer.expiresAt));
      expect(h.pending).toBe(false);
      timer.pending = false;
      timer.fires++;
      // Only the first firing acts, so that timers refreshing each other cannot run forever.
      if (timer.fires === 1) run(timer.action);
    });
    timers.push(timer);
  };
  const cancel = (timer: ModelTimer | undefined): void => {
    if (timer === undefined) return;
    expect(timer.handle.cancel()).toBe(timer.pending);
    timer.pending = false;
  };
  const refresh = (timer: ModelTimer | undefined, delay: number | undefined): void => {
    if (timer === undefined) return;
    const d = delay ?? timer.handle.delayMs;
    timer.handle.refresh(delay);
    timer.expiresAt = clock.now() + d;
    timer.pending = true;
  };
  const run = (action: Action): void => {
    if (action.kind === 'schedule') schedule(action.delay, { kind: 'none' });
    else if (action.kind === 'cancel') cancel(pick(action.target));
    else if (action.kind === 'refresh') refresh(pick(action.target), action.delay);
  };
  const agree = (): void => {
    const pending = timers.filter((t) => t.pending);
    expect(wheel.size).toBe(pending.length);
    for (const t of timers) expect(t.handle.pending).toBe(t.pending);
  };

  for (const op of ops) {
    if (op.kind === 'schedule') schedule(op.delay, op.action);
    else if (op.kind === 'cancel') cancel(pick(op.target));
    else if (op.kind === 'refresh') refresh(pick(op.target), op.delay);
    else {
      clock.advance(op.ms);
      // Everything due by now has fired.
      for (const t of timers) if (t.pending) expect(boundary(t.expiresAt)).toBeGreaterThan(clock.now());
    }
    agree();
  }
  // Drain: every timer that was not cancelled fires exactly once per arming.
  while (clock.runNext());
  agree();
  expect(wheel.size).toBe(0);
  for (const t of timers) expect(t.pending).toBe(false);
  expect(wheel.stats().fired).toBe(timers.reduce((n, t) => n + t.fires, 0));
}

describe('TimingWheel (property)', () => {
  it('agrees with a reference model on random operation sequences (tick 1 ms)', () => {
    fc.assert(
      fc.property(fc.constantFrom(2, 4, 64), fc.array(opArb, { maxLength: 120 }), (wheelSize, ops) => check(1, wheelSize, ops)),
      { numRuns: 300 },
    );
  });

  it('agrees with a reference model with a coarse tick', () => {
    fc.assert(
      fc.property(fc.constantFrom(3, 10), fc.constantFrom(4, 64), fc.array(opArb, { maxLength: 120 }), (tickMs, wheelSize, ops) =>
        check(tickMs, wheelSize, ops),
      ),
      { numRuns: 200 },
    );
  });
});

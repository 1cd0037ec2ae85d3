import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, TimerLoopError, TimingWheel, type TimerHandle } from '../src/index.js';

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
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('refresh' as const),
      target: fc.nat(),
      delay: fc.option(delayArb, { nil: undefined }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 2 ** 34 })),
    }),
  },
);

function check(tickMs: number, wheelSize: number, ops: Op[]): void {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock, tickMs, wheelSize });
  const timers: ModelTimer[] = [];
  const boundary = (t: number) => Math.ceil(t / tickMs) * tickMs;
  const pick = (n: number) => (timers.length === 0 ? undefined : timers[n % timers.length]);

  const schedule = (delay: number, action: Action): void => {
    const timer: ModelTimer = {
      handle: undefined as never,
      expiresAt: clock.now() + delay,
      pending: true,
      fires: 0,
      action,
    };
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
      fc.property(fc.constantFrom(2, 4, 64), fc.array(opArb, { maxLength: 120 }), (wheelSize, ops) =>
        check(1, wheelSize, ops),
      ),
      { numRuns: 300 },
    );
  });

  it('agrees with a reference model with a coarse tick', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(3, 10),
        fc.constantFrom(4, 64),
        fc.array(opArb, { maxLength: 120 }),
        (tickMs, wheelSize, ops) => check(tickMs, wheelSize, ops),
      ),
      { numRuns: 200 },
    );
  });
});

/**
 * The edges, fuzzed: delays over the whole range up to Number.MAX_VALUE, fractional ticks, wheel
 * sizes 2 to 2^16, callbacks that schedule, cancel and refresh others due in the same tick, and
 * an advance() that must finish within a bounded number of wake-ups.
 */
const edgeDelayArb = fc.oneof(
  { weight: 4, arbitrary: fc.double({ min: 0, max: 300, noNaN: true }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      0,
      0.5,
      2 ** 31 - 1,
      2 ** 31,
      2 ** 53 - 1,
      2 ** 53,
      2 ** 53 + 2,
      1e300,
      Number.MAX_VALUE,
    ),
  },
  { weight: 2, arbitrary: fc.double({ min: 0, max: Number.MAX_VALUE, noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 ** 40 }) },
);
const tickArb = fc.oneof(
  fc.constantFrom(1, 0.3, 0.7, 1000 / 60, 1 / 1024, 10),
  fc.double({ min: 1e-3, max: 1e4, noNaN: true }),
);
const wheelSizeArb = fc.integer({ min: 1, max: 16 }).map((k) => 2 ** k);
type EdgeOp =
  | { kind: 'schedule'; delay: number; sameTick: 'none' | 'schedule' | 'cancel' | 'refresh'; target: number }
  | { kind: 'cancel'; target: number }
  | { kind: 'refresh'; target: number; delay: number }
  | { kind: 'advance'; ms: number };
const edgeOpArb: fc.Arbitrary<EdgeOp> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('schedule' as const),
      delay: edgeDelayArb,
      sameTick: fc.constantFrom('none' as const, 'schedule' as const, 'cancel' as const, 'refresh' as const),
      target: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), target: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('refresh' as const), target: fc.nat(), delay: edgeDelayArb }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.double({ min: 0, max: 500, noNaN: true }), fc.integer({ min: 0, max: 2 ** 45 })),
    }),
  },
);

function checkEdges(tickMs: number, wheelSize: number, ops: EdgeOp[]): void {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock, tickMs, wheelSize });
  const handles: TimerHandle[] = [];
  const armedAt = new Map<TimerHandle, number>();
  const pick = (n: number) => (handles.length === 0 ? undefined : handles[n % handles.length]);
  const onFire = (h: TimerHandle): void => {
    const now = clock.now();
    // Never early by the reading it reports, and at most one tick after the later of its expiry
    // and the moment it was armed (an overdue timer fires on the next pass).
    expect(now).toBeGreaterThanOrEqual(h.expiresAt);
    expect(now).toBeLessThanOrEqual(Math.max(h.expiresAt, armedAt.get(h)!) + tickMs);
  };
  const arm = (h: TimerHandle) => {
    armedAt.set(h, clock.now());
    return h;
  };
  for (const op of ops) {
    if (op.kind === 'schedule') {
      const { sameTick, target } = op;
      const h = wheel.schedule(op.delay, (self) => {
        onFire(self);
        // Act on another timer in the very tick being fired (the first firing only).
        if (sameTick === 'schedule') arm(wheel.schedule(0, onFire));
        else if (sameTick === 'cancel') pick(target)?.cancel();
        else if (sameTick === 'refresh' && self !== pick(target)) {
          const other = pick(target);
          if (other !== undefined) arm(other.refresh(0));
        }
      });
      handles.push(arm(h));
    } else if (op.kind === 'cancel') {
      pick(op.target)?.cancel();
    } else if (op.kind === 'refresh') {
      const h = pick(op.target);
      if (h !== undefined) arm(h.refresh(op.delay));
    } else {
      if (clock.now() + op.ms > 2 ** 52) continue; // keep readings whole-ms exact for the bounds above
      const before = wheel.stats();
      try {
        clock.advance(op.ms);
      } catch (error) {
        // Timers refreshing each other at 0 ms are an infinite loop, which the wheel stops.
        expect(error).toBeInstanceOf(TimerLoopError);
      }
      const after = wheel.stats();
      // Bounded steps: every wake-up fires, cascades or re-files an entry, or was armed for a
      // bucket a cancel emptied.
      const work =
        after.fired -
        before.fired +
        after.cascaded -
        before.cascaded +
        after.refiled -
        before.refiled +
        after.cancelled -
        before.cancelled;
      expect(after.wakeups - before.wakeups).toBeLessThanOrEqual(work + 1);
      for (const h of handles) if (h.pending) expect(h.expiresAt).toBeGreaterThan(clock.now());
    }
    expect(wheel.size).toBe(handles.filter((h) => h.pending).length);
  }
}

describe('TimingWheel (property: edges)', () => {
  it('any delay, any tick, any wheel size: never early, at most one tick late, advance() bounded', () => {
    fc.assert(fc.property(tickArb, wheelSizeArb, fc.array(edgeOpArb, { maxLength: 60 }), checkEdges), { numRuns: 300 });
  }, 60_000);

  it('a clock far out (up to Number.MAX_VALUE) never hangs advance() or schedule()', () => {
    fc.assert(
      fc.property(
        tickArb,
        wheelSizeArb,
        fc.array(fc.tuple(edgeDelayArb, fc.double({ min: 0, max: Number.MAX_VALUE / 4, noNaN: true })), {
          maxLength: 20,
        }),
        (tickMs, wheelSize, steps) => {
          const clock = new ManualClock(0);
          const wheel = new TimingWheel({ clock, tickMs, wheelSize });
          for (const [delay, ms] of steps) {
            const h = wheel.schedule(delay, (self) => expect(clock.now()).toBeGreaterThanOrEqual(self.expiresAt));
            h.refresh(delay / 2);
            if (clock.now() + ms < Number.MAX_VALUE) clock.advance(ms);
          }
          while (clock.runNext());
          expect(wheel.stats().pending).toBe(steps.filter(([d]) => d / 2 > 2 ** 53).length);
        },
      ),
      { numRuns: 200 },
    );
  }, 60_000);

  it('a fixed-step loop at any frame rate fires each timer on its frame', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(60, 30, 144, 120, 50, 24),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 1, max: 300 })), {
          minLength: 1,
          maxLength: 20,
        }),
        (hz, timers) => {
          const frameMs = 1000 / hz;
          const clock = new ManualClock(0);
          const wheel = new TimingWheel({ clock, tickMs: frameMs });
          let frame = 0;
          const plan = [...timers].sort((a, b) => a[0] - b[0]);
          const fired: Array<[number, number]> = [];
          const expected: Array<[number, number]> = [];
          let next = 0;
          for (; frame <= 2400; frame++) {
            while (next < plan.length && plan[next][0] === frame) {
              const [at, frames] = plan[next++];
              expected.push([at, at + frames]);
              wheel.schedule(frames * frameMs, () => fired.push([at, frame + 1]));
            }
            clock.advance(frameMs); // from frame `frame` to frame `frame + 1`
          }
          const byFrame = (a: [number, number], b: [number, number]) => a[0] - b[0] || a[1] - b[1];
          expect(fired.sort(byFrame)).toEqual(expected.sort(byFrame));
        },
      ),
      { numRuns: 100 },
    );
  }, 60_000);
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, TimerSet, TimingWheel, type TimerPolicy } from '../../src/index.js';

/**
 * TimerSet against a model that is obviously right because it is slow: game time moves one
 * millisecond at a time, and every step scans every stack.
 */

type Key = string | number;
type Op =
  | {
      kind: 'set';
      key: Key;
      durationMs: number;
      value: number;
      policy: TimerPolicy | undefined;
      maxStacks: number | undefined;
    }
  | { kind: 'delete'; key: Key }
  | { kind: 'pause'; key: Key | undefined }
  | { kind: 'resume'; key: Key | undefined }
  | { kind: 'advance'; ms: number };

/** [real ms, key, value, stacksLeft] */
type Fired = [number, Key, number, number];

interface ModelStack {
  /** Game-time expiry while the key runs. */
  expiresAt: number;
  /** Remaining ms while the key is paused. */
  remainingMs: number;
}
interface ModelEntry {
  value: number;
  paused: boolean;
  stacks: ModelStack[];
}

/** With `reapplyOdd`, an expiry of the last stack whose value is odd sets the key again: 5 ms, value + 1. */
const REAPPLY_MS = 5;

class Model {
  constructor(private readonly reapplyOdd = false) {}
  realMs = 0;
  gameMs = 0;
  paused = false;
  readonly entries = new Map<Key, ModelEntry>();
  readonly fired: Fired[] = [];

  remainingOf(entry: ModelEntry, stack: ModelStack): number {
    return entry.paused ? stack.remainingMs : Math.max(0, stack.expiresAt - this.gameMs);
  }

  setRemaining(entry: ModelEntry, stack: ModelStack, ms: number): void {
    if (entry.paused) stack.remainingMs = ms;
    else stack.expiresAt = this.gameMs + ms;
  }

  newStack(entry: ModelEntry, ms: number): ModelStack {
    const stack = { expiresAt: 0, remainingMs: 0 };
    this.setRemaining(entry, stack, ms);
    return stack;
  }

  apply(op: Op): void {
    switch (op.kind) {
      case 'set': {
        const entry = this.entries.get(op.key);
        if (entry === undefined) {
          const created: ModelEntry = { value: op.value, paused: false, stacks: [] };
          created.stacks.push(this.newStack(created, op.durationMs));
          this.entries.set(op.key, created);
          return;
        }
        const policy = op.policy ?? 'replace';
        if (policy === 'ignore') return;
        if (policy === 'replace') entry.stacks = [this.newStack(entry, op.durationMs)];
        if (policy === 'max') {
          for (const s of entry.stacks)
            if (op.durationMs > this.remainingOf(entry, s)) this.setRemaining(entry, s, op.durationMs);
        }
        if (policy === 'extend') {
          for (const s of entry.stacks) this.setRemaining(entry, s, this.remainingOf(entry, s) + op.durationMs);
        }
        if (policy === 'stack') {
          entry.stacks.push(this.newStack(entry, op.durationMs));
          while (entry.stacks.length > (op.maxStacks ?? Infinity)) entry.stacks.shift();
        }
        entry.value = op.value;
        return;
      }
      case 'delete':
        this.entries.delete(op.key);
        return;
      case 'pause': {
        if (op.key === undefined) {
          this.paused = true;
          return;
        }
        const entry = this.entries.get(op.key);
        if (entry === undefined || entry.paused) return;
        for (const s of entry.stacks) s.remainingMs = this.remainingOf(entry, s);
        entry.paused = true;
        return;
      }
      case 'resume': {
        if (op.key === undefined) {
          this.paused = false;
          return;
        }
        const entry = this.entries.get(op.key);
        if (entry === undefined || !entry.paused) return;
        entry.paused = false;
        for (const s of entry.stacks) s.expiresAt = this.gameMs + s.remainingMs;
        return;
      }
      case 'advance':
        this.fireDue();
        for (let i = 0; i < op.ms; i++) {
          this.realMs++;
          if (!this.paused) this.gameMs++;
          this.fireDue();
        }
    }
  }

  private fireDue(): void {
    if (this.paused) return;
    for (const [key, entry] of this.entries) {
      if (entry.paused) continue;
      for (const s of [...entry.stacks]) {
        if (s.expiresAt > this.gameMs) continue;
        entry.stacks.splice(entry.stacks.indexOf(s), 1);
        if (entry.stacks.length === 0) this.entries.delete(key);
        this.fired.push([this.realMs, key, entry.value, entry.stacks.length]);
        if (this.reapplyOdd && entry.stacks.length === 0 && entry.value % 2 === 1) {
          this.apply({
            kind: 'set',
            key,
            durationMs: REAPPLY_MS,
            value: entry.value + 1,
            policy: undefined,
            maxStacks: undefined,
          });
        }
      }
    }
  }
}

/** Runs ops on a real TimerSet over a ManualClock and records its expiries. */
class Real {
  constructor(private readonly reapplyOdd = false) {}
  readonly clock = new ManualClock(0);
  readonly wheel = new TimingWheel({ clock: this.clock });
  readonly fired: Fired[] = [];
  readonly set: TimerSet<number> = new TimerSet<number>({
    wheel: this.wheel,
    onExpire: (key, value, info) => {
      this.fired.push([this.clock.now(), key, value, info.stacksLeft]);
      if (this.reapplyOdd && info.stacksLeft === 0 && value % 2 === 1) this.set.set(key, REAPPLY_MS, value + 1);
    },
  });

  apply(op: Op): void {
    switch (op.kind) {
      case 'set': {
        const options =
          op.policy === undefined && op.maxStacks === undefined
            ? undefined
            : { policy: op.policy, maxStacks: op.maxStacks };
        this.set.set(op.key, op.durationMs, op.value, options);
        return;
      }
      case 'delete':
        this.set.delete(op.key);
        return;
      case 'pause':
        if (op.key === undefined) this.set.pause();
        else this.set.pause(op.key);
        return;
      case 'resume':
        if (op.key === undefined) this.set.resume();
        else this.set.resume(op.key);
        return;
      case 'advance':
        this.clock.advance(op.ms);
    }
  }
}

/** Expiries in time order; within one millisecond the order is the wheel's business, so sort it. */
function canonical(fired: Fired[]): string[] {
  return fired
    .map((f) => JSON.stringify(f))
    .sort((a, b) => {
      const ta = JSON.parse(a)[0] as number;
      const tb = JSON.parse(b)[0] as number;
      return ta - tb || (a < b ? -1 : a > b ? 1 : 0);
    });
}

function expectSameState(model: Model, real: Real): void {
  expect(real.set.size).toBe(model.entries.size);
  expect(real.set.isPaused()).toBe(model.paused);
  for (const [key, entry] of model.entries) {
    expect(real.set.has(key)).toBe(true);
    expect(real.set.get(key)).toBe(entry.value);
    expect(real.set.isPaused(key)).toBe(entry.paused);
    expect(real.set.stacks(key)).toBe(entry.stacks.length);
    expect(real.set.remainingPerStack(key)).toEqual(entry.stacks.map((s) => model.remainingOf(entry, s)));
  }
  expect(canonical(real.fired)).toEqual(canonical(model.fired));
}

const keyArb = fc.constantFrom<Key>('a', 'b', 1);
let nextValue = 0;
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('set' as const),
      key: keyArb,
      durationMs: fc.integer({ min: 0, max: 40 }),
      value: fc.constant(0).map(() => ++nextValue),
      policy: fc.option(fc.constantFrom<TimerPolicy>('replace', 'max', 'extend', 'ignore', 'stack', 'stack', 'stack'), {
        nil: undefined,
        freq: 8,
      }),
      maxStacks: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: keyArb }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('pause' as const), key: fc.option(keyArb, { nil: undefined }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('resume' as const), key: fc.option(keyArb, { nil: undefined }) }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 }) }) },
);
const opsArb = fc.array(opArb, { maxLength: 80 });

describe('TimerSet (property)', () => {
  it.each([
    ['', false],
    [' when onExpire sets expired keys again', true],
  ])(
    'agrees with the model after every operation: state, remaining times and expiries%s',
    (_title, reapplyOdd) => {
      fc.assert(
        fc.property(opsArb, (ops) => {
          const model = new Model(reapplyOdd);
          const real = new Real(reapplyOdd);
          for (const op of ops) {
            model.apply(op);
            real.apply(op);
            expectSameState(model, real);
          }
          const drain: Op[] = [
            { kind: 'resume', key: undefined },
            ...['a', 'b', 1].map((key): Op => ({ kind: 'resume', key })),
            { kind: 'advance', ms: 400 },
          ];
          for (const op of drain) {
            model.apply(op);
            real.apply(op);
          }
          expectSameState(model, real);
          expect(real.set.size).toBe(0);
          expect(real.wheel.size).toBe(0);
        }),
        { numRuns: 400 },
      );
      // 400 runs take a few seconds; a busy shared machine doubles that.
    },
    30_000,
  );

  it('fires in exactly the same order when the same calls are repeated', () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        const first = new Real();
        const second = new Real();
        for (const op of [...ops, { kind: 'resume', key: undefined } as Op, { kind: 'advance', ms: 400 } as Op]) {
          first.apply(op);
          second.apply(op);
        }
        expect(second.fired).toEqual(first.fired);
      }),
      { numRuns: 200 },
    );
  });

  it("continues identically after a snapshot and a 'frozen' restore on another clock", () => {
    fc.assert(
      fc.property(opsArb, opsArb, fc.integer({ min: 0, max: 10_000 }), (before, after, startMs) => {
        const original = new Real();
        for (const op of before) original.apply(op);
        const saved = JSON.parse(JSON.stringify(original.set.snapshot()));
        const clock = new ManualClock(startMs);
        const wheel = new TimingWheel({ clock });
        const restoredFired: Fired[] = [];
        const restored = TimerSet.restore<number>(saved, {
          wheel,
          offline: 'frozen',
          onExpire: (key, value, info) => restoredFired.push([clock.now() - startMs, key, value, info.stacksLeft]),
        });
        const base = original.clock.now();
        original.fired.length = 0;
        for (const op of after) {
          original.apply(op);
          if (op.kind === 'set')
            restored.set(op.key, op.durationMs, op.value, { policy: op.policy, maxStacks: op.maxStacks });
          else if (op.kind === 'delete') restored.delete(op.key);
          else if (op.kind === 'pause') {
            if (op.key === undefined) restored.pause();
            else restored.pause(op.key);
          } else if (op.kind === 'resume') {
            if (op.key === undefined) restored.resume();
            else restored.resume(op.key);
          } else clock.advance(op.ms);
        }
        const shifted = original.fired.map(([t, ...rest]): Fired => [t - base, ...rest]);
        expect(canonical(restoredFired)).toEqual(canonical(shifted));
        expect([...restored.keys()].sort()).toEqual([...original.set.keys()].sort());
        for (const key of original.set.keys())
          expect(restored.remainingPerStack(key)).toEqual(original.set.remainingPerStack(key));
      }),
      { numRuns: 200 },
    );
  });
});

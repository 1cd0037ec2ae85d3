import { describe, expect, it } from 'vitest';
import { dueLimit, startLimits, type LimitMarks } from '../src/limits.js';
import { resolveOptions } from '../src/options.js';

const marks = (): LimitMarks => ({
  firstMessageBy: Infinity,
  closeAt: Infinity,
  overSince: NaN,
  drainCheckAt: Infinity,
});

describe('startLimits', () => {
  it('draws each lifetime uniformly in [max × (1 − jitter), max]', () => {
    const o = resolveOptions({ maxLifetimeMs: 1_000, lifetimeJitter: 0.2 });
    const at = (r: number) => {
      const m = marks();
      startLimits(m, 50, o, () => r);
      return m.closeAt;
    };
    expect(at(0)).toBeCloseTo(50 + 800);
    expect(at(0.5)).toBeCloseTo(50 + 900);
    expect(at(0.999_999)).toBeCloseTo(50 + 1_000, 2);
  });

  it('leaves every mark off for the limits that are off', () => {
    const m = marks();
    startLimits(m, 0, resolveOptions({ pingIntervalMs: 100 }));
    expect(m).toEqual({ firstMessageBy: Infinity, closeAt: Infinity, overSince: NaN, drainCheckAt: Infinity });
  });
});

describe('dueLimit', () => {
  it('reports the first-message deadline and the lifetime when they come', () => {
    const o = resolveOptions({ firstMessageMs: 100, maxLifetimeMs: 300 });
    const m = marks();
    startLimits(m, 0, o);
    expect(dueLimit(m, 0, 99, o)).toBeUndefined();
    expect(dueLimit(m, 0, 100, o)).toBe('firstMessage');
    m.firstMessageBy = Infinity;
    expect(dueLimit(m, 0, 299, o)).toBeUndefined();
    expect(dueLimit(m, 0, 300, o)).toBe('lifetime');
  });

  it('cuts off a consumer above maxBufferedBytes at two looks drainTimeoutMs apart, not one that drained between', () => {
    const o = resolveOptions({ pingIntervalMs: 0, maxBufferedBytes: 1_000, drainTimeoutMs: 50 });
    const m = marks();
    startLimits(m, 0, o);
    expect(m.drainCheckAt).toBe(50);
    expect(dueLimit(m, 5_000, 50, o)).toBeUndefined(); // above: from now on
    expect([m.overSince, m.drainCheckAt]).toEqual([50, 100]);
    expect(dueLimit(m, 999, 100, o)).toBeUndefined(); // drained
    expect([m.overSince, m.drainCheckAt]).toEqual([NaN, 150]);
    expect(dueLimit(m, 5_000, 150, o)).toBeUndefined();
    expect(dueLimit(m, 5_000, 200, o)).toBe('slowConsumer');
  });
});

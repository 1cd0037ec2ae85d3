import { describe, expect, it } from 'vitest';
import { createDeadline, describeBudget, LATE_TIMER_MS, ManualClock, TimingWheel, withDeadline } from '../src/index.js';
import { inheritedBudget, ownBudget, ownedDeadline, timeoutBudget } from '../src/internal.js';

function manualWheel() {
  const clock = new ManualClock(0);
  return { clock, wheel: new TimingWheel({ clock }) };
}

describe('timeoutBudget', () => {
  it('is frozen, rounds its spans to 0.1 ms and never goes negative', () => {
    const budget = timeoutBudget({
      limit: 'totalMs',
      inherited: false,
      source: undefined,
      budgetMs: 100,
      spentBeforeMs: -0.01,
      elapsedMs: 100.04,
      lateMs: 3.456,
    });
    expect(Object.isFrozen(budget)).toBe(true);
    expect(budget).toEqual({
      limit: 'totalMs',
      inherited: false,
      source: undefined,
      budgetMs: 100,
      spentBeforeMs: 0,
      elapsedMs: 100,
      lateMs: 3.5,
    });
  });

  it('keeps the extra fields an adapter adds', () => {
    const budget = timeoutBudget({ ...ownBudget('headersMs', 50, 50, 0), attempts: 2 });
    expect(budget.attempts).toBe(2);
    expect(budget.limit).toBe('headersMs');
  });
});

describe('inheritedBudget', () => {
  it("takes the deadline's source and whole budget, and what was gone before the call", () => {
    const { clock, wheel } = manualWheel();
    withDeadline(
      2000,
      () => {
        clock.advance(1200);
        const nested = createDeadline(5000, { wheel });
        const budget = inheritedBudget(nested, 800, 790, 10);
        nested.dispose();
        expect(budget).toEqual({
          limit: 'deadline',
          inherited: true,
          source: 'withDeadline',
          budgetMs: 2000,
          spentBeforeMs: 1200,
          elapsedMs: 790,
          lateMs: 10,
        });
      },
      { wheel },
    );
  });
});

describe('describeBudget', () => {
  it("names a call's own limit and its time", () => {
    expect(describeBudget(ownBudget('headersMs', 100, 100.4, 0.4))).toBe('headersMs of 100 ms: 100 ms in this call');
  });

  it('names an inherited deadline, its source and the time spent before the call', () => {
    const { wheel } = manualWheel();
    const scope = ownedDeadline(2000, wheel, { deadlineAborted() {} }, false, 'header:grpc-timeout');
    expect(describeBudget(inheritedBudget(scope, 800, 800, 0))).toBe(
      'the deadline of 2000 ms from header:grpc-timeout: 1200 ms spent before this call, 800 ms in it',
    );
    scope.dispose();
  });

  it(`blames the event loop from ${LATE_TIMER_MS} ms of lateness on, not below`, () => {
    expect(describeBudget(ownBudget('totalMs', 100, 700, 600))).toBe(
      'totalMs of 100 ms: 700 ms in this call; the timer ran 600 ms late: the event loop was blocked',
    );
    expect(describeBudget(ownBudget('totalMs', 100, 100 + LATE_TIMER_MS - 1, LATE_TIMER_MS - 1))).not.toMatch(/late/);
  });
});

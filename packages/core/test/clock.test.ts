/**
 * The clock contract of timing-wheel.ts, held on the real system clock: delays count from the
 * job's reading, a timer never fires before its `expiresAt` by a fresh reading, the native timer
 * is armed from a fresh reading (so no timer is late by the length of a job), and `remaining()`
 * agrees with when the timer fires. Lateness bounds are generous: the host is shared.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { freshNow, ManualClock, SystemClock, TimingWheel, type TimerHandle } from '../src/index.js';
import { holdReading, releaseReading } from '../src/internal.js';
import { expectUnknownKey } from '../../../tests/helpers/bad-options.js';

const wheels: TimingWheel[] = [];
function systemWheel(clock = new SystemClock()): TimingWheel {
  const wheel = new TimingWheel({ clock });
  wheels.push(wheel);
  return wheel;
}
afterEach(() => {
  for (const wheel of wheels.splice(0)) wheel.close();
});

function busyLoop(ms: number): void {
  const start = performance.now();
  while (performance.now() - start < ms);
}

/** Resolves with the fresh reading at which `handle`'s callback ran. */
function firing(wheel: TimingWheel, delayMs: number): { handle: TimerHandle; fired: Promise<number> } {
  let resolve!: (at: number) => void;
  const fired = new Promise<number>((r) => (resolve = r));
  const handle = wheel.schedule(delayMs, () => resolve(freshNow(wheel.clock)));
  return { handle, fired };
}

describe('SystemClock', () => {
  describe('#constructor', () => {
    it('refuses an unknown option and a readOncePerJob that is not a boolean', () => {
      expectUnknownKey(() => new SystemClock({ readOnce: false } as never), '@tickwheel/core', 'readOnce');
      expect(() => new SystemClock({ readOncePerJob: 0 as never })).toThrow(
        new TypeError('@tickwheel/core: readOncePerJob must be a boolean, got 0'),
      );
      expect(() => new SystemClock(null as never)).toThrow(TypeError);
    });
  });

  describe('#now', () => {
    it('reuses one reading within a job and reads afresh in the next', async () => {
      const clock = new SystemClock();
      const first = clock.now();
      busyLoop(5);
      expect(clock.now()).toBe(first);
      await Promise.resolve();
      expect(clock.now()).toBeGreaterThanOrEqual(first + 5);
    });

    it('reads every time with readOncePerJob: false', () => {
      const clock = new SystemClock({ readOncePerJob: false });
      const first = clock.now();
      busyLoop(3);
      expect(clock.now()).toBeGreaterThanOrEqual(first + 3);
    });
  });

  describe('#endJob and freshNow', () => {
    it("freshNow reads afresh and renews the job's reading; endJob drops it", () => {
      const clock = new SystemClock();
      const first = clock.now();
      busyLoop(5);
      const fresh = freshNow(clock);
      expect(fresh).toBeGreaterThanOrEqual(first + 5);
      expect(clock.now()).toBe(fresh);
      busyLoop(3);
      clock.endJob();
      expect(clock.now()).toBeGreaterThanOrEqual(fresh + 3);
    });

    it('drops a reading taken after endJob when the job ends, like the first one', async () => {
      const clock = new SystemClock();
      clock.now();
      clock.endJob(); // as a wheel does before each callback of a pass
      const second = clock.now();
      busyLoop(3);
      expect(clock.now()).toBe(second);
      await Promise.resolve();
      expect(clock.now()).toBeGreaterThanOrEqual(second + 3);
    });
  });

  describe('#_readingId', () => {
    it('names each reading a job reuses, and is -1 whenever now() would read afresh', async () => {
      const clock = new SystemClock();
      await Promise.resolve(); // a job of its own, whatever the test runner read before
      expect(clock._readingId).toBe(-1);
      clock.now();
      const first = clock._readingId;
      expect(first).toBeGreaterThanOrEqual(0);
      clock.now();
      expect(clock._readingId).toBe(first);
      freshNow(clock); // a new reading for the rest of the job: a new id
      const renewed = clock._readingId;
      expect(renewed).not.toBe(first);
      clock.endJob();
      expect(clock._readingId).toBe(-1);
      clock.now();
      expect(clock._readingId).not.toBe(renewed);
      await Promise.resolve();
      expect(clock._readingId).toBe(-1);
      expect(new SystemClock({ readOncePerJob: false })._readingId).toBe(-1);
    });
  });

  describe('holdReading and releaseReading', () => {
    it('hold a fresh reading that now() returns until the release, then now() reads afresh in the same job', () => {
      const clock = new SystemClock();
      const held = holdReading(clock);
      busyLoop(3);
      expect(clock.now()).toBe(held);
      releaseReading(clock);
      const after = clock.now();
      expect(after).toBeGreaterThanOrEqual(held + 3);
      busyLoop(2);
      expect(clock.now()).toBe(after); // the job's own reading again, until the job ends
    });

    it("renew a reading the job already took, and leave it the job's after the release", async () => {
      const clock = new SystemClock();
      const first = clock.now();
      busyLoop(3);
      const held = holdReading(clock);
      expect(held).toBeGreaterThanOrEqual(first + 3);
      releaseReading(clock);
      busyLoop(2);
      expect(clock.now()).toBe(held);
      await Promise.resolve();
      expect(clock.now()).toBeGreaterThanOrEqual(held + 2);
    });

    it('read afresh on a clock that does not reuse readings, and on a ManualClock', () => {
      const clock = new SystemClock({ readOncePerJob: false });
      const held = holdReading(clock);
      busyLoop(2);
      expect(clock.now()).toBeGreaterThanOrEqual(held + 2);
      releaseReading(clock);
      const manual = new ManualClock(5);
      expect(holdReading(manual)).toBe(5);
      manual.advance(3);
      expect(manual.now()).toBe(8);
      releaseReading(manual);
    });
  });

  describe('the clock contract', () => {
    it("a delay counts from the job's reading; the timer fires at its expiresAt, not a job length late", async () => {
      const wheel = systemWheel();
      wheel.schedule(60_000, () => undefined).cancel(); // the job's reading is taken here
      const jobStart = wheel.clock.now();
      busyLoop(40);
      const { handle, fired } = firing(wheel, 60);
      expect(handle.expiresAt).toBeGreaterThanOrEqual(jobStart + 60);
      expect(handle.expiresAt).toBeLessThanOrEqual(jobStart + 61);
      const at = await fired;
      expect(at).toBeGreaterThanOrEqual(handle.expiresAt);
      // Armed from a stale reading it would fire ~40 ms after expiresAt.
      expect(at - handle.expiresAt).toBeLessThan(35);
    }, 10_000);

    it('a timer pending across a long callback fires when the loop is free, not a job length late', async () => {
      let late = Infinity;
      for (let attempt = 0; attempt < 3 && late >= 60; attempt++) {
        const wheel = systemWheel();
        wheel.schedule(1, () => {
          wheel.schedule(1_000, () => undefined); // reads the clock, then works for 100 ms
          busyLoop(100);
        });
        const { handle, fired } = firing(wheel, 86); // due 85 ms into the 100 ms callback
        late = (await fired) - handle.expiresAt;
        expect(late).toBeGreaterThanOrEqual(0);
      }
      expect(late).toBeLessThan(60); // armed from a stale reading: ~15 + 85 ms
    }, 20_000);

    it('never fires before expiresAt by a fresh reading, for many timers on one wheel', async () => {
      const wheel = systemWheel();
      const delays = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89];
      const results = await Promise.all(
        delays.map(async (d) => {
          const { handle, fired } = firing(wheel, d);
          return [await fired, handle.expiresAt] as const;
        }),
      );
      for (const [at, expiresAt] of results) expect(at).toBeGreaterThanOrEqual(expiresAt);
    }, 10_000);

    it('remaining() is expiresAt minus a fresh reading, and reaches 0 as the timer fires', async () => {
      const wheel = systemWheel();
      const { handle, fired } = firing(wheel, 100);
      busyLoop(30);
      // Bracketed by two readings: a process descheduled between statements moves neither bound.
      const before = performance.now();
      const left = handle.remaining();
      const after = performance.now();
      expect(left).toBeLessThanOrEqual(71);
      expect(left).toBeLessThanOrEqual(handle.expiresAt - before);
      expect(left).toBeGreaterThanOrEqual(handle.expiresAt - after);
      const at = await fired;
      expect(handle.remaining()).toBe(0);
      expect(at - handle.expiresAt).toBeGreaterThanOrEqual(0);
    }, 10_000);
  });
});

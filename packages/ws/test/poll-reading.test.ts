import { ManualClock, SystemClock } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { PollReading } from '../src/poll-reading.js';

const nextCheckPhase = () => new Promise((resolve) => setImmediate(resolve));

describe('PollReading', () => {
  describe('#at', () => {
    it('on the system clock, reuses the first reading of a poll until the check phase after it', async () => {
      const reading = new PollReading(new SystemClock(), () => undefined);
      const first = reading.at(-Infinity);
      const spinUntil = performance.now() + 2;
      while (performance.now() < spinUntil); // the clock moves on; the poll's reading does not
      expect(reading.at(-Infinity)).toBe(first);
      expect(reading.at(first)).toBe(first);
      await nextCheckPhase();
      expect(reading.at(-Infinity)).toBeGreaterThan(first);
    });

    it("hands a fresh reading to onPollEnd when the poll ends, not the poll's shared one", async () => {
      const ends: number[] = [];
      const reading = new PollReading(new SystemClock(), (at) => ends.push(at));
      const first = reading.at(-Infinity);
      const spinUntil = performance.now() + 2;
      while (performance.now() < spinUntil);
      reading.at(-Infinity);
      expect(ends).toEqual([]);
      await nextCheckPhase();
      expect(ends).toHaveLength(1);
      expect(ends[0]).toBeGreaterThanOrEqual(first + 2);
    });

    it('reads the clock afresh when the poll reading is older than the ping being answered', () => {
      const clock = new SystemClock();
      const reading = new PollReading(clock, () => undefined);
      const first = reading.at(-Infinity);
      const spinUntil = performance.now() + 2;
      while (performance.now() < spinUntil);
      const sentAt = clock.preciseNow();
      const later = reading.at(sentAt);
      expect(later).toBeGreaterThanOrEqual(sentAt);
      expect(later).toBeGreaterThan(first);
      expect(reading.at(-Infinity)).toBe(later); // the fresher reading serves the rest of the poll
    });

    it('reads any other clock every time (a manual clock moves within a job)', () => {
      const clock = new ManualClock(100);
      const ends: number[] = [];
      const reading = new PollReading(clock, (at) => ends.push(at));
      expect(reading.at(-Infinity)).toBe(100);
      clock.advance(7);
      expect(reading.at(-Infinity)).toBe(107);
      expect(ends).toEqual([100, 107]);
    });
  });
});

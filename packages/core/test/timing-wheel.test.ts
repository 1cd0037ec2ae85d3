import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel } from '../src/index.js';

describe('TimingWheel', () => {
  describe('#schedule', () => {
    it('fires a timer exactly at its expiry on a ManualClock', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const seen: number[] = [];
      const handle = wheel.schedule(5, (h) => seen.push(clock.now(), h.expiresAt));
      clock.advance(4);
      expect(seen).toEqual([]);
      expect(handle.pending).toBe(true);
      clock.advance(1);
      expect(seen).toEqual([5, 5]);
      expect(handle.pending).toBe(false);
    });
  });
});

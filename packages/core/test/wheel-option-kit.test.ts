import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel } from '../src/index.js';
import { optionKit } from '../src/internal.js';

describe('optionKit (core/internal)', () => {
  const kit = optionKit('@tickwheel/test');

  it('has every leaf check, in the same message shape', () => {
    expect(kit.pkg).toBe('@tickwheel/test');
    expect(() => kit.durationMs(-1, 'leaseMs')).toThrow(
      new RangeError('@tickwheel/test: leaseMs must be a finite number of ms >= 0, got -1'),
    );
  });

  describe('#wheel', () => {
    it('takes an open wheel by its brand, and refuses look-alikes and closed wheels', () => {
      const wheel = new TimingWheel({ clock: new ManualClock() });
      expect(kit.wheel(wheel, 'wheel')).toBe(wheel);
      const lookAlike = { scheduleAt: () => undefined, clock: { now: () => 0 } };
      expect(() => kit.wheel(lookAlike, 'wheel')).toThrow(TypeError);
      wheel.close();
      expect(() => kit.wheel(wheel, 'wheel')).toThrow(
        new RangeError('@tickwheel/test: wheel must be an open TimingWheel, got an object (TimingWheel)'),
      );
    });
  });
});

import { describe, expect, it } from 'vitest';
import { PingPass, readingAt } from '../src/readings.js';

describe('readings', () => {
  describe('readingAt', () => {
    it('hands out one reading per time while the time does not change', () => {
      const a = readingAt(100);
      expect(readingAt(100)).toBe(a);
      expect(readingAt(101)).not.toBe(a);
      expect(readingAt(101).at).toBe(101);
    });
  });

  describe('PingPass#reading', () => {
    it('is one reading of the time the pass sent at, for every record of the pass', () => {
      const pass = new PingPass(10);
      expect(pass.reading).toBe(pass.reading);
      pass.sentAt = 12; // the pass ended: its fresh reading
      expect(pass.reading.at).toBe(12);
    });
  });
});

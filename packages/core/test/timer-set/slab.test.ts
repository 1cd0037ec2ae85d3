import { describe, expect, it } from 'vitest';
import { DUE, grown, NEWER, OLDER, OWNER, STAMP, StackSlab } from '../../src/timer-set/slab.js';

describe('slab', () => {
  describe('StackSlab', () => {
    it('hands out fresh indices in order, recording the owner', () => {
      const slab = new StackSlab();
      expect([slab.alloc(7), slab.alloc(8), slab.alloc(9)]).toEqual([0, 1, 2]);
      expect(slab.w[(1 << 3) | OWNER]).toBe(8);
    });

    it('reuses the most recently freed index first (still in cache)', () => {
      const slab = new StackSlab();
      const [a, b, c] = [slab.alloc(0), slab.alloc(0), slab.alloc(0)];
      slab.free(a);
      slab.free(c);
      expect(slab.alloc(1)).toBe(c);
      expect(slab.alloc(1)).toBe(a);
      expect(slab.alloc(1)).toBe(3);
      expect(b).toBe(1);
    });

    it('keeps a timer’s integer fields and its due time in one buffer, 32 bytes per timer', () => {
      const slab = new StackSlab();
      const s = slab.alloc(5);
      slab.w[(s << 3) | STAMP] = 11;
      slab.w[(s << 3) | NEWER] = 13;
      slab.w[(s << 3) | OLDER] = 14;
      slab.t[(s << 2) | DUE] = 123.5;
      expect(slab.w.buffer).toBe(slab.t.buffer);
      expect(Array.from(slab.w.subarray(s << 3, (s << 3) + 5))).toEqual([11, 0, 5, 13, 14]);
      expect(slab.t[(s << 2) | DUE]).toBe(123.5);
      for (let i = 1; i < 256; i++) slab.alloc(0);
      expect(slab.w.byteLength / 256).toBe(32);
    });

    it('starts with room for 8 timers, so that a set per game entity stays small', () => {
      const slab = new StackSlab();
      slab.alloc(0);
      expect(slab.w.byteLength).toBe(8 * 32);
    });

    it('keeps an index’s stamp when it is freed and handed out again', () => {
      const slab = new StackSlab();
      const s = slab.alloc(1);
      slab.w[(s << 3) | STAMP] = 41;
      slab.free(s);
      expect(slab.alloc(2)).toBe(s);
      expect(slab.w[(s << 3) | STAMP]).toBe(41);
    });

    it('doubles its buffer when full, keeping every field', () => {
      const slab = new StackSlab();
      for (let i = 0; i < 256; i++) {
        const s = slab.alloc(i);
        slab.t[(s << 2) | DUE] = i * 1.5;
      }
      const s = slab.alloc(999);
      expect(s).toBe(256);
      expect(slab.w.length).toBe(512 * 8);
      expect(slab.w.buffer).toBe(slab.t.buffer);
      expect(slab.w[(255 << 3) | OWNER]).toBe(255);
      expect(slab.t[(255 << 2) | DUE]).toBe(255 * 1.5);
      expect(slab.w[(256 << 3) | OWNER]).toBe(999);
    });

    it('remembers freed indices past the first capacity', () => {
      const slab = new StackSlab();
      const all = Array.from({ length: 300 }, () => slab.alloc(0));
      for (const s of all) slab.free(s);
      expect(slab.alloc(0)).toBe(299);
    });
  });

  describe('#grown', () => {
    it('copies into the start of the larger array and returns it', () => {
      const to = new Int32Array(4);
      expect(grown(Int32Array.from([1, 2]), to)).toBe(to);
      expect(Array.from(to)).toEqual([1, 2, 0, 0]);
    });
  });
});

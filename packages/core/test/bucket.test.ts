import { describe, expect, it } from 'vitest';
import { Bucket, type Link } from '../src/wheel/bucket.js';

/** A timer entry as far as the bucket is concerned: two links. */
function entry(): Link {
  return { _prev: null, _next: null };
}

/** The entries of `bucket`'s ring, head to tail, checking the back links on the way. */
function ring(bucket: Bucket): Link[] {
  const out: Link[] = [];
  for (let at = bucket._next; at !== bucket; at = at._next!) {
    expect(at._next!._prev).toBe(at);
    out.push(at);
  }
  expect(bucket._prev._next).toBe(bucket);
  return out;
}

describe('bucket', () => {
  describe('Bucket', () => {
    it('starts empty, a ring of itself, and keeps its level and slot', () => {
      const bucket = new Bucket(2, 17);
      expect(bucket.isEmpty).toBe(true);
      expect(bucket._next).toBe(bucket);
      expect(bucket._prev).toBe(bucket);
      expect([bucket.level, bucket.slot]).toEqual([2, 17]);
    });

    describe('#append', () => {
      it('appends at the tail and says whether the bucket was empty', () => {
        const bucket = new Bucket(0, 0);
        const [a, b, c] = [entry(), entry(), entry()];
        expect(bucket.append(a)).toBe(true);
        expect(bucket.append(b)).toBe(false);
        expect(bucket.append(c)).toBe(false);
        expect(ring(bucket)).toEqual([a, b, c]);
        expect(bucket.isEmpty).toBe(false);
      });

      it('lets an entry unlink itself in O(1) without knowing its bucket, and shows when that emptied it', () => {
        const bucket = new Bucket(0, 0);
        const [a, b] = [entry(), entry()];
        bucket.append(a);
        bucket.append(b);
        const unlink = (e: Link): boolean => {
          const emptied = e._prev === e._next; // both neighbours are the sentinel
          e._prev!._next = e._next;
          e._next!._prev = e._prev;
          e._prev = e._next = null;
          return emptied;
        };
        expect(unlink(a)).toBe(false);
        expect(ring(bucket)).toEqual([b]);
        expect(unlink(b)).toBe(true);
        expect(bucket.isEmpty).toBe(true);
      });
    });

    describe('#moveAllTo', () => {
      it('moves the whole ring to an empty bucket in order, leaving this one empty', () => {
        const from = new Bucket(1, 3);
        const batch = new Bucket(-1, 0);
        const entries = [entry(), entry(), entry()];
        for (const e of entries) from.append(e);
        from.moveAllTo(batch);
        expect(from.isEmpty).toBe(true);
        expect(ring(from)).toEqual([]);
        expect(ring(batch)).toEqual(entries);
        expect(entries[0]._prev).toBe(batch);
        expect(entries[2]._next).toBe(batch);
      });

      it('does nothing for an empty bucket', () => {
        const from = new Bucket(0, 0);
        const into = new Bucket(-1, 0);
        from.moveAllTo(into);
        expect(into.isEmpty).toBe(true);
        expect(from.isEmpty).toBe(true);
      });
    });
  });
});

import { ManualClock, TimingWheel } from '@tickwheel/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DueSchedule, heldRing, type DueEntry, type DueLink } from '../src/due-schedule.js';

class Entry implements DueEntry {
  prev: DueLink | undefined = undefined;
  next: DueLink | undefined = undefined;
  constructor(readonly name: string) {}
}

let clock: ManualClock;
let wheel: TimingWheel;
let ran: string[];
let schedule: DueSchedule<Entry>;

beforeEach(() => {
  clock = new ManualClock(0);
  wheel = new TimingWheel({ clock });
  ran = [];
  schedule = new DueSchedule<Entry>(wheel, { run: (e) => ran.push(`${e.name}@${clock.now()}`) });
});

afterEach(() => {
  wheel.close();
});

describe('DueSchedule', () => {
  describe('#file', () => {
    it('runs every entry at its due time, with one wheel handle per due time', () => {
      const [a, b, c] = [new Entry('a'), new Entry('b'), new Entry('c')];
      schedule.file(a, 10);
      schedule.file(b, 10);
      schedule.file(c, 20);
      expect(wheel.size).toBe(2);
      expect(schedule.groupCount).toBe(2);
      clock.advanceTo(9);
      expect(ran).toEqual([]);
      clock.advanceTo(10);
      expect(ran).toEqual(['a@10', 'b@10']);
      expect(wheel.stats().fired).toBe(1);
      clock.advanceTo(20);
      expect(ran).toEqual(['a@10', 'b@10', 'c@20']);
      expect(wheel.size).toBe(0);
    });

    it('rounds a fractional due time up to the whole ms, never early', () => {
      const [a, b] = [new Entry('a'), new Entry('b')];
      schedule.file(a, 10.2);
      schedule.file(b, 10.9);
      expect(schedule.groupCount).toBe(1);
      clock.advanceTo(10.5);
      expect(ran).toEqual([]);
      clock.advanceTo(11);
      expect(ran).toEqual(['a@11', 'b@11']);
    });

    it('moves a filed entry to its new due time, and leaves it unfiled for Infinity', () => {
      const a = new Entry('a');
      schedule.file(a, 10);
      schedule.file(a, 30);
      expect(wheel.size).toBe(1);
      clock.advanceTo(20);
      expect(ran).toEqual([]);
      schedule.file(a, Infinity);
      expect(a.prev).toBeUndefined();
      expect(wheel.size).toBe(0);
      clock.advanceTo(100);
      expect(ran).toEqual([]);
    });

    it('lets the runner file the entry again, even at the time that is running', () => {
      const a = new Entry('a');
      let rounds = 0;
      const again = new DueSchedule<Entry>(wheel, {
        run: (e) => {
          if (++rounds < 3) again.file(e, clock.now() + 5);
        },
      });
      again.file(a, 5);
      clock.advanceTo(100);
      expect(rounds).toBe(3);
      expect(wheel.size).toBe(0);
    });
  });

  describe('#unfile', () => {
    it('cancels the handle of a due time whose last entry leaves', () => {
      const [a, b] = [new Entry('a'), new Entry('b')];
      schedule.file(a, 10);
      schedule.file(b, 10);
      schedule.unfile(a);
      expect(wheel.size).toBe(1);
      schedule.unfile(b);
      expect(wheel.size).toBe(0);
      expect(wheel.stats().cancelled).toBe(1);
      schedule.unfile(b); // not filed: nothing happens
      clock.advanceTo(50);
      expect(ran).toEqual([]);
    });

    it('takes an entry out of a group that is running, before its turn', () => {
      const [a, b] = [new Entry('a'), new Entry('b')];
      const s = new DueSchedule<Entry>(wheel, {
        run: (e) => {
          ran.push(e.name);
          if (e === a) s.unfile(b);
        },
      });
      s.file(a, 10);
      s.file(b, 10);
      clock.advanceTo(10);
      expect(ran).toEqual(['a']);
    });
  });

  it('runs every entry of a group even when the runner throws, then throws what it threw', () => {
    const [a, b, c] = [new Entry('a'), new Entry('b'), new Entry('c')];
    let thrown = false;
    const s = new DueSchedule<Entry>(wheel, {
      run: (e) => {
        ran.push(`${e.name}@${clock.now()}`);
        if (e === a && !thrown) {
          thrown = true;
          throw new Error('runner bug');
        }
      },
    });
    s.file(a, 10);
    s.file(b, 10);
    s.file(c, 10);
    expect(() => clock.advanceTo(10)).toThrow('runner bug');
    clock.advanceTo(11);
    expect(ran).toEqual(['a@10', 'b@10', 'c@10']);
    expect(wheel.size).toBe(0);
  });

  it('runs 1,500 entries whose runner always throws in one round (no loop limit), one AggregateError', () => {
    const entries = Array.from({ length: 1_500 }, (_, i) => new Entry(`e${i}`));
    const s = new DueSchedule<Entry>(wheel, {
      run: (e) => {
        ran.push(e.name);
        throw new Error(`listener bug ${e.name}`);
      },
    });
    for (const e of entries) s.file(e, 10);
    let caught: unknown;
    try {
      clock.advanceTo(10);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AggregateError);
    expect((caught as AggregateError).errors).toHaveLength(1_500);
    expect((caught as AggregateError).message).toBe('1500 heartbeat listeners threw');
    expect(ran).toHaveLength(1_500);
    expect(wheel.size).toBe(0);
  });

  describe('#clear', () => {
    it('cancels every handle and unlinks every entry', () => {
      const [a, b] = [new Entry('a'), new Entry('b')];
      schedule.file(a, 10);
      schedule.file(b, 20);
      schedule.clear();
      expect(wheel.size).toBe(0);
      expect([a.prev, a.next, b.prev, b.next]).toEqual([undefined, undefined, undefined, undefined]);
      clock.advanceTo(50);
      expect(ran).toEqual([]);
      schedule.file(a, 60);
      clock.advanceTo(60);
      expect(ran).toEqual(['a@60']);
    });
  });
  describe('#hold / #fileAll', () => {
    it('keeps held entries off the wheel, then files them all after what the group already has', () => {
      const [a, b, c, d] = [new Entry('a'), new Entry('b'), new Entry('c'), new Entry('d')];
      const ring = heldRing();
      schedule.file(a, 10);
      schedule.hold(b, ring);
      schedule.hold(c, ring);
      schedule.hold(d, ring);
      expect(wheel.size).toBe(1);
      schedule.unfile(c); // a held entry leaves its ring like a filed one
      schedule.file(a, 10);
      schedule.fileAll(ring, 9.5);
      expect(schedule.groupCount).toBe(1);
      schedule.fileAll(ring, 20); // empty now: nothing opens
      expect(schedule.groupCount).toBe(1);
      clock.advanceTo(10);
      expect(ran).toEqual(['a@10', 'b@10', 'd@10']);
      expect(c.prev).toBeUndefined();
      expect(wheel.size).toBe(0);
    });

    it('takes a held entry out of the group it was filed in, and leaves every entry unfiled for Infinity', () => {
      const [a, b] = [new Entry('a'), new Entry('b')];
      const ring = heldRing();
      schedule.file(a, 10);
      schedule.hold(a, ring);
      schedule.hold(b, ring);
      expect(wheel.size).toBe(0);
      schedule.fileAll(ring, Infinity);
      expect([a.prev, a.next, b.prev, b.next]).toEqual([undefined, undefined, undefined, undefined]);
      clock.advanceTo(20);
      expect(ran).toEqual([]);
    });
  });
});

import { ManualClock, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { WriteAndIdle } from '../src/write-marks.js';
import { dueIdle } from '../src/idle.js';
import { resolveOptions } from '../src/options.js';

const wheel = new TimingWheel({ clock: new ManualClock(0) });
const options = (o: object) => resolveOptions({ pingIntervalMs: 0, wheel, ...o });

describe('dueIdle', () => {
  it('finds nothing due before the limit (IdleStateHandler: no event before readerIdleTime)', () => {
    const marks = new WriteAndIdle(0);
    expect(dueIdle(marks, 0, 49, options({ readerIdleMs: 50 }))).toBeUndefined();
  });

  it('reports each due kind once, then again only a full limit later', () => {
    const marks = new WriteAndIdle(0);
    const o = options({ readerIdleMs: 50, writerIdleMs: 50, allIdleMs: 50 });
    expect(dueIdle(marks, 0, 50, o)).toEqual([
      { kind: 'reader', idleMs: 50, first: true },
      { kind: 'writer', idleMs: 50, first: true },
      { kind: 'all', idleMs: 50, first: true },
    ]);
    expect(dueIdle(marks, 0, 99, o)).toBeUndefined();
    expect(dueIdle(marks, 0, 100, o)).toEqual([
      { kind: 'reader', idleMs: 100, first: false },
      { kind: 'writer', idleMs: 100, first: false },
      { kind: 'all', idleMs: 100, first: false },
    ]);
  });

  it('starts a new stretch after activity of that kind, and all-idleness needs both quiet', () => {
    const marks = new WriteAndIdle(0);
    const o = options({ readerIdleMs: 50, allIdleMs: 50 });
    expect(dueIdle(marks, 0, 50, o)).toHaveLength(2);
    marks.lastWriteAt = 60;
    // A write at 60 and a read at 70: all-idleness counts from the later one.
    expect(dueIdle(marks, 70, 110, o)).toBeUndefined();
    expect(dueIdle(marks, 70, 120, o)).toEqual([
      { kind: 'reader', idleMs: 50, first: true },
      { kind: 'all', idleMs: 50, first: true },
    ]);
    marks.lastWriteAt = 150;
    expect(dueIdle(marks, 70, 170, o)).toEqual([{ kind: 'reader', idleMs: 100, first: false }]);
    expect(dueIdle(marks, 70, 200, o)).toEqual([{ kind: 'all', idleMs: 50, first: true }]);
  });
});

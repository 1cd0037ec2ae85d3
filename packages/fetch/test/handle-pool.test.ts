import { ManualClock, TimingWheel } from '@tickwheel/core';
import { beforeEach, describe, expect, it } from 'vitest';
import { lendHandle, MAX_POOLED, returnHandle, type HandleOwner } from '../src/handle-pool.js';

let clock: ManualClock;
let wheel: TimingWheel;

beforeEach(() => {
  clock = new ManualClock(0);
  wheel = new TimingWheel({ clock });
});

function owner(): HandleOwner & { fired: number[] } {
  const fired: number[] = [];
  return { fired, onTimer: () => fired.push(clock.now()) };
}

describe('HandlePool', () => {
  it('lends an unref’ed handle armed for the delay, that wakes its owner', () => {
    const first = owner();
    const lent = lendHandle(wheel, 30, first);
    expect(lent.handle.hasRef()).toBe(false);
    expect(wheel.size).toBe(1);
    clock.advance(30);
    expect(first.fired).toEqual([30]);
  });

  it('re-arms a returned handle for the next owner, who alone is woken', () => {
    const first = owner();
    const lent = lendHandle(wheel, 30, first);
    returnHandle(wheel, lent);
    expect(wheel.size).toBe(0);
    const second = owner();
    const again = lendHandle(wheel, 50, second);
    expect(again).toBe(lent); // no allocation: the pooled handle itself
    expect(again.handle.hasRef()).toBe(false);
    clock.advance(100);
    expect(first.fired).toEqual([]);
    expect(second.fired).toEqual([50]);
  });

  it('never wakes an owner after it returned the handle, even one that fired meanwhile', () => {
    const first = owner();
    const lent = lendHandle(wheel, 10, first);
    clock.advance(10);
    returnHandle(wheel, lent);
    clock.advance(1_000);
    expect(first.fired).toEqual([10]);
    expect(wheel.size).toBe(0);
  });

  it('gives back a handle a backoff ref’ed as unref’ed, so the wheel never holds the process', () => {
    const lent = lendHandle(wheel, 10, owner());
    lent.handle.ref();
    returnHandle(wheel, lent);
    expect(lendHandle(wheel, 10, owner()).handle.hasRef()).toBe(false);
  });

  it('keeps at most MAX_POOLED handles per wheel, and a pool per wheel', () => {
    const lent = Array.from({ length: MAX_POOLED + 10 }, () => lendHandle(wheel, 10, owner()));
    for (const each of lent) returnHandle(wheel, each);
    const reused = Array.from({ length: MAX_POOLED + 10 }, () => lendHandle(wheel, 10, owner()));
    expect(reused.filter((each) => lent.includes(each))).toHaveLength(MAX_POOLED);
    const other = new TimingWheel({ clock });
    const elsewhere = lendHandle(other, 10, owner());
    expect(lent.includes(elsewhere)).toBe(false);
    expect(other.size).toBe(1);
  });
});

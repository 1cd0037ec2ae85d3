import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/clocks/manual-clock.js';
import { GameClock } from '../src/timer-set-game-clock.js';
import { TimingWheel } from '../src/wheel/timing-wheel.js';

function setup(startMs = 1_000, timeScale = 1) {
  const real = new ManualClock(startMs);
  const outer = new TimingWheel({ clock: real });
  const clock = new GameClock(outer, timeScale);
  const wakes: number[] = [];
  const driver = clock.createDriver(() => wakes.push(clock.now()));
  return { real, outer, clock, driver, wakes };
}

describe('timer-set-game-clock', () => {
  describe('GameClock', () => {
    it('follows the outer clock while running', () => {
      const { real, clock } = setup();
      expect(clock.now()).toBe(1_000);
      real.advance(250);
      expect(clock.now()).toBe(1_250);
    });

    describe('#pause and #resume', () => {
      it('freezes its time while paused and resumes where it stopped', () => {
        const { real, clock } = setup();
        real.advance(100);
        expect(clock.pause()).toBe(true);
        expect(clock.paused).toBe(true);
        real.advance(5_000);
        expect(clock.now()).toBe(1_100);
        expect(clock.resume()).toBe(true);
        real.advance(50);
        expect(clock.now()).toBe(1_150);
      });

      it('returns false for a pause while paused and a resume while running', () => {
        const { clock } = setup();
        expect(clock.resume()).toBe(false);
        clock.pause();
        expect(clock.pause()).toBe(false);
      });
    });

    describe('#setTimeScale', () => {
      it('starts at the outer reading and runs at the scale from there', () => {
        const { real, clock } = setup(1_000, 0.5);
        expect(clock.now()).toBe(1_000);
        real.advance(100);
        expect(clock.now()).toBe(1_050);
        clock.setTimeScale(3);
        expect(clock.timeScale).toBe(3);
        real.advance(100);
        expect(clock.now()).toBe(1_350);
      });

      it('stands still at 0 without being paused, and goes on from the same reading', () => {
        const { real, clock } = setup();
        real.advance(10);
        clock.setTimeScale(0);
        real.advance(1_000);
        expect(clock.now()).toBe(1_010);
        expect(clock.paused).toBe(false);
        clock.setTimeScale(2);
        real.advance(5);
        expect(clock.now()).toBe(1_020);
      });

      it('keeps the scale across a pause and applies a scale set while paused on resume', () => {
        const { real, clock } = setup();
        clock.setTimeScale(2);
        real.advance(10); // 1_020
        clock.pause();
        clock.setTimeScale(4);
        real.advance(1_000);
        expect(clock.now()).toBe(1_020);
        clock.resume();
        real.advance(10);
        expect(clock.now()).toBe(1_060);
      });

      it('re-arms its one outer timer for the new speed, and cancels it at 0', () => {
        const { real, outer, clock, driver, wakes } = setup();
        driver.arm(1_100);
        real.advance(50);
        clock.setTimeScale(0.5); // 50 game ms left: 100 outer ms
        expect(outer.size).toBe(1);
        real.advance(99);
        expect(wakes).toEqual([]);
        clock.setTimeScale(0);
        expect(outer.size).toBe(0);
        real.advance(10_000);
        expect(wakes).toEqual([]);
        clock.setTimeScale(1); // 0.5 game ms left: woken on the outer wheel's next 1 ms tick
        real.advance(1);
        expect(wakes).toEqual([1_100.5]);
      });
    });

    describe('as a wake-up driver', () => {
      it('wakes the inner wheel at the virtual time asked for, with ONE outer timer', () => {
        const { real, outer, driver, wakes } = setup();
        driver.arm(1_300);
        driver.arm(1_200); // re-armed: the same outer handle, refreshed
        expect(outer.size).toBe(1);
        real.advance(199);
        expect(wakes).toEqual([]);
        real.advance(1);
        expect(wakes).toEqual([1_200]);
      });

      it('holds the wake-up while paused and re-arms it for the time left on resume', () => {
        const { real, outer, clock, driver, wakes } = setup();
        driver.arm(1_100);
        real.advance(60);
        clock.pause();
        expect(outer.size).toBe(0);
        real.advance(10_000);
        expect(wakes).toEqual([]);
        clock.resume();
        real.advance(39);
        expect(wakes).toEqual([]);
        real.advance(1);
        expect(wakes).toEqual([1_100]);
      });

      it('never reads below the time it was woken for (no early reading from rounding)', () => {
        const { real, driver, wakes, clock } = setup(0);
        driver.arm(0.3);
        real.advance(1);
        expect(wakes[0]).toBeGreaterThanOrEqual(0.3);
        expect(clock.now()).toBeGreaterThanOrEqual(0.3);
      });

      it('disarms and closes its outer timer', () => {
        const { real, outer, driver, wakes } = setup();
        driver.arm(1_100);
        driver.disarm();
        expect(outer.size).toBe(0);
        driver.arm(1_200);
        driver.close();
        real.advance(1_000);
        expect(wakes).toEqual([]);
        expect(outer.size).toBe(0);
      });

      it('passes ref and unref on to its outer timer', () => {
        const { outer, driver } = setup();
        driver.setRef(false);
        driver.arm(1_100);
        expect(outer.size).toBe(1);
        // The outer handle is private: read on purpose, it is what a set's unref() reaches.
        const handle = (driver as unknown as { handle: { hasRef(): boolean } }).handle;
        expect(handle.hasRef()).toBe(false);
        driver.setRef(true);
        expect(handle.hasRef()).toBe(true);
      });

      it('arms nothing on a closed outer wheel', () => {
        const { outer, driver } = setup();
        outer.close();
        expect(() => driver.arm(1_100)).not.toThrow();
        expect(outer.size).toBe(0);
      });
    });
  });
});

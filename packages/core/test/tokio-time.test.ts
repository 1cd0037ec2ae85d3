/**
 * tokio's timer tests, translated: `tokio/tests/time_sleep.rs` (a `Sleep` is a handle here,
 * `reset` is `refresh`) and `tokio-util/tests/time_delay_queue.rs` (a `DelayQueue` entry is a
 * handle; "the queue is woken" is the wheel's driver firing). tokio's `time::pause()` becomes a
 * `ManualClock`. tokio has a 1 ms resolution wheel of 64 slots a level, as the default here.
 */
import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS, ManualClock, TimingWheel, type TimerHandle } from '../src/index.js';

function paused() {
  const clock = new ManualClock(1_000);
  const wheel = new TimingWheel({ clock });
  const fired: string[] = [];
  const insertAt = (name: string, atMs: number) => wheel.scheduleAt(atMs, () => fired.push(name));
  return { clock, wheel, fired, insertAt };
}

describe('tokio tests/time_sleep.rs', () => {
  it('immediate_sleep: a 0 ms sleep completes at the same instant', () => {
    const { clock, wheel } = paused();
    const now = clock.now();
    let at = -1;
    wheel.schedule(0, () => (at = clock.now()));
    clock.advance(0);
    expect(at).toBe(now);
  });

  it('delayed_sleep_level_0 / delayed_sleep_wrapping_level_0: sleep_until fires exactly at the deadline', () => {
    const { clock, wheel } = paused();
    for (const dur of [1, 10, 60]) {
      const now = clock.now();
      let at = -1;
      wheel.scheduleAt(now + dur, () => (at = clock.now()));
      while (at < 0) clock.runNext();
      expect(at - now).toBe(dur);
    }
    clock.advance(5);
    const now = clock.now();
    let at = -1;
    wheel.scheduleAt(now + 60, () => (at = clock.now()));
    clock.runNext();
    expect(at - now).toBe(60);
  });

  it('sub_ms_delayed_sleep: a deadline 1 ms + 1 ns out fires at the next whole tick, never before it', () => {
    const { clock, wheel } = paused();
    for (let i = 0; i < 5; i++) {
      const now = clock.now();
      let at = -1;
      wheel.scheduleAt(now + 1 + 1e-6, () => (at = clock.now()));
      while (at < 0) clock.runNext();
      // tokio rounds this deadline down to 1 ms; rounding down could fire early, so here it
      // fires at 2 ms.
      expect(at - now).toBe(2);
    }
  });

  it('reset_future_sleep_before_fire / reset_past_sleep_before_turn / reset_past_sleep_before_fire', () => {
    for (const [resetTo, sleepFirst] of [
      [200, 0],
      [80, 0],
      [80, 10],
    ] as const) {
      const { clock, wheel } = paused();
      const now = clock.now();
      let at = -1;
      const sleep = wheel.scheduleAt(now + 100, () => (at = clock.now()));
      clock.advance(sleepFirst);
      sleep.refresh(now + resetTo - clock.now());
      while (at < 0) clock.runNext();
      expect(at - now).toBe(resetTo);
    }
  });

  it('reset_future_sleep_after_fire: a fired sleep can be reset and fires again', () => {
    const { clock, wheel } = paused();
    const now = clock.now();
    const times: number[] = [];
    const sleep = wheel.scheduleAt(now + 100, () => times.push(clock.now() - now));
    clock.advance(100);
    sleep.refresh(now + 110 - clock.now());
    clock.advance(100);
    expect(times).toEqual([100, 110]);
  });

  it('reset_sleep_to_past: a sleep reset into the past fires on the next pass', () => {
    const { clock, wheel } = paused();
    let fired = false;
    const sleep = wheel.schedule(60, () => (fired = true));
    clock.advance(50);
    sleep.refresh(0);
    expect(fired).toBe(false);
    clock.advance(0);
    expect(fired).toBe(true);
  });

  it('greater_than_max / long_sleeps / multi_long_sleeps: years-long sleeps fire exactly, within 1 ms', () => {
    const { clock, wheel } = paused();
    const year = 365 * 24 * 3600 * 1000;
    for (let i = 0; i < 5; i++) {
      const deadline = clock.now() + year;
      let at = -1;
      wheel.schedule(year, () => (at = clock.now()));
      clock.runNext();
      while (at < 0) clock.runNext();
      expect(at).toBe(deadline);
    }
    const deadline = clock.now() + 10 * year;
    let at = -1;
    wheel.scheduleAt(deadline, () => (at = clock.now()));
    while (at < 0) clock.runNext();
    expect(at).toBeGreaterThanOrEqual(deadline);
    expect(at).toBeLessThanOrEqual(deadline + 1);
  });

  it('short_sleeps: 1000 sleeps of 0 ms in a row each complete (system clock)', async () => {
    const wheel = new TimingWheel();
    for (let i = 0; i < 1000; i++) await new Promise((resolve) => wheel.schedule(0, resolve));
    expect(wheel.stats().fired).toBe(1000);
    wheel.close();
  }, 20_000);

  it('reset_after_firing: resetting a fired sleep changes its deadline and makes it pending', () => {
    const { clock, wheel } = paused();
    const timer = wheel.schedule(1, () => undefined);
    const deadline = timer.expiresAt;
    clock.advance(1);
    expect(timer.state).toBe('fired');
    timer.refresh(600_000);
    expect(timer.expiresAt).not.toBe(deadline);
    expect(timer.pending).toBe(true);
  });

  it('exactly_max / no_out_of_bounds_close_to_max: the largest delays neither hang nor fire', () => {
    const { clock, wheel } = paused();
    // tokio clamps Duration::MAX to its far future and its paused clock jumps there; here any
    // delay above MAX_DELAY_MS (2^53 ms) is a timer that never fires and costs no wake-up.
    let fired = 0;
    const max = wheel.schedule(Number.MAX_VALUE, () => fired++);
    const nearMax = wheel.schedule(Number.MAX_VALUE - 1, () => fired++);
    expect(clock.runNext()).toBe(false);
    clock.advance(1e300);
    expect(fired).toBe(0);
    expect([max.expiresAt, nearMax.remaining()]).toEqual([Infinity, Infinity]);
  });

  it('exactly MAX_DELAY_MS (2^53 ms) is honoured to the millisecond', () => {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    let at = -1;
    const h = wheel.schedule(MAX_DELAY_MS, () => (at = clock.now()));
    expect(h.expiresAt).toBe(2 ** 53);
    clock.advance(2 ** 53 - 1);
    expect(at).toBe(-1);
    clock.advance(1);
    expect(at).toBe(2 ** 53);
  });

  it('issue_5183: a huge sleep next to a 1 ns sleep; the short one wins', () => {
    const { clock, wheel } = paused();
    const winner: string[] = [];
    wheel.schedule(((2 ** 64 - 1) / 10) * 1000, () => winner.push('big'));
    wheel.schedule(1e-6, () => winner.push('small'));
    clock.runNext();
    expect(winner).toEqual(['small']);
  });

  it('drop_after_reschedule_at_new_scheduled_time: cancelling a rescheduled sleep at its new time', () => {
    const { clock, wheel } = paused();
    const start = clock.now();
    const fired: string[] = [];
    const a = wheel.schedule(5, () => fired.push('a'));
    const b = wheel.schedule(5, () => fired.push('b'));
    wheel.schedule(10, () => fired.push('c'));
    b.refresh(start + 10 - clock.now());
    clock.advance(5);
    expect(a.state).toBe('fired');
    b.cancel();
    clock.advance(5);
    expect(fired).toEqual(['a', 'c']);
  });
});

describe('tokio tokio-util tests/time_delay_queue.rs', () => {
  it('single_immediate_delay / multi_immediate_delays / insert_in_past_fires_immediately', () => {
    const { clock, fired, insertAt } = paused();
    insertAt('1', clock.now());
    insertAt('2', clock.now());
    insertAt('3', clock.now() - 10);
    clock.advance(1);
    expect([...fired].sort()).toEqual(['1', '2', '3']);
  });

  it("multi_delay_at_start: each entry fires at its own ms, with at most tokio's two extra wake-ups", () => {
    const { clock, wheel } = paused();
    const long = 262_144 + 9 * 4096;
    const delays = [1000, 2, 234, long, 60, 10];
    const start = clock.now();
    const firedAt = new Map<number, number>();
    for (const d of delays) wheel.scheduleAt(start + d, () => firedAt.set(d, clock.now() - start));
    while (clock.runNext());
    for (const d of delays) expect(firedAt.get(d)).toBe(d);
    // tokio wakes at the 6 delays and at 2 cascades (192, 960); arming at a coarse bucket's
    // earliest timer needs no cascade wake-ups here.
    expect(wheel.stats().wakeups).toBeLessThanOrEqual(delays.length + 2);
  });

  it('remove_entry / remove_expired_item: a removed entry never fires', () => {
    const { clock, fired, insertAt } = paused();
    const key = insertAt('foo', clock.now() + 5);
    expect(key.cancel()).toBe(true);
    const expired = insertAt('bar', clock.now() - 10);
    expect(expired.cancel()).toBe(true);
    clock.advance(10);
    expect(fired).toEqual([]);
  });

  it('reset_entry: moved from 5 ms to 10 ms, it does not fire at 8 and fires at 10', () => {
    const { clock, fired, insertAt } = paused();
    const now = clock.now();
    const key = insertAt('foo', now + 5);
    clock.advance(1);
    key.refresh(now + 10 - clock.now());
    clock.advance(7);
    expect(fired).toEqual([]);
    clock.advance(2);
    expect(fired).toEqual(['foo']);
  });

  it('reset_to_past_wakes_pending_queue / repeatedly_reset_entry_inserted_as_expired / reset_inserted_expired', () => {
    const { clock, fired, insertAt } = paused();
    const key = insertAt('foo', clock.now() + 10_000);
    key.refresh(0);
    clock.advance(0);
    expect(fired).toEqual(['foo']);

    const now = clock.now();
    const expired = insertAt('bar', now - 100);
    expired.refresh(100);
    expired.refresh(50);
    clock.advance(49);
    expect(fired).toEqual(['foo']);
    clock.advance(11);
    expect(fired).toEqual(['foo', 'bar']);
  });

  it('reset_much_later / reset_twice (tokio#849): a pushed-back then pulled-in entry still fires', () => {
    const { clock, fired, insertAt } = paused();
    const now = clock.now();
    clock.advance(1);
    const key = insertAt('foo', now + 200);
    clock.advance(3);
    key.refresh(now + 50 - clock.now());
    clock.advance(20);
    key.refresh(now + 40 - clock.now());
    clock.advance(20);
    expect(fired).toEqual(['foo']);
    expect(clock.now() - now).toBe(44);
  });

  it('remove_at_timer_wheel_threshold: removing the sibling of an entry at a level boundary', () => {
    const { clock, wheel } = paused();
    const now = clock.now();
    const got: string[] = [];
    const handles: Record<string, TimerHandle> = {};
    for (const name of ['foo', 'bar']) {
      handles[name] = wheel.scheduleAt(now + 64, () => {
        got.push(name);
        const other = handles[name === 'foo' ? 'bar' : 'foo'];
        expect(other.cancel()).toBe(true);
      });
    }
    clock.advance(80);
    expect(got).toHaveLength(1);
    expect(wheel.size).toBe(0);
  });

  it('expires_before_last_insert / insert_before_first_after_poll / insert_in_past_after_poll_fires_immediately', () => {
    const { clock, fired, insertAt } = paused();
    const now = clock.now();
    insertAt('foo', now + 10_000);
    insertAt('bar', now + 600);
    clock.advance(599);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual(['bar']);
    insertAt('baz', now + 40);
    clock.advance(0);
    expect(fired).toEqual(['bar', 'baz']);
  });

  it('multi_reset / expire_first_key_when_reset_to_expire_earlier / reset_first_expiring_item_to_expire_later', () => {
    const { clock, fired, insertAt } = paused();
    const now = clock.now();
    const one = insertAt('one', now + 200);
    const two = insertAt('two', now + 250);
    one.refresh(300);
    two.refresh(350);
    one.refresh(400);
    clock.advance(310);
    expect(fired).toEqual([]);
    clock.advance(40);
    expect(fired).toEqual(['two']);
    clock.advance(50);
    expect(fired).toEqual(['two', 'one']);
  });

  it('insert_after_ready_poll: inserting from a firing callback does not disturb the batch', () => {
    const { clock, wheel } = paused();
    const now = clock.now();
    const res: string[] = [];
    for (const name of ['1', '2', '3']) {
      wheel.scheduleAt(now + 100, () => {
        res.push(name);
        wheel.scheduleAt(now + 500, () => res.push('foo'));
      });
    }
    clock.advance(100);
    expect(res).toEqual(['1', '2', '3']);
    clock.advance(400);
    expect(res).toEqual(['1', '2', '3', 'foo', 'foo', 'foo']);
  });

  it('reset_later_after_slot_starts / reset_earlier_after_slot_starts: the wheel has not turned since 0, reset to 120', () => {
    for (const first of [100, 200]) {
      const { clock, fired, insertAt } = paused();
      const now = clock.now();
      const foo = insertAt('foo', now + first);
      clock.advanceTo(now + 80);
      foo.refresh(now + 120 - clock.now());
      clock.advanceTo(now + 119);
      expect(fired).toEqual([]);
      clock.advance(1);
      expect(fired).toEqual(['foo']);
    }
  });

  it('item_expiry_greater_than_wheel: a queue alive for 2^36 ms still takes new entries', () => {
    const { clock, wheel } = paused();
    let fired = 0;
    for (let i = 0; i < 2; i++) {
      clock.advance(2 ** 35);
      wheel.schedule(0, () => fired++);
      clock.advance(0);
    }
    wheel.schedule(1, () => fired++);
    clock.advance(1);
    expect(fired).toBe(3);
  });

  it('wake_after_remove_last / wake_after_clear: removing the last entry disarms the driver', () => {
    const { clock, wheel } = paused();
    const key = wheel.schedule(10, () => undefined);
    key.cancel();
    expect(clock.runNext()).toBe(false);
    wheel.schedule(10, () => undefined);
    wheel.close();
    expect(clock.runNext()).toBe(false);
  });
});

import { spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freshNow, ManualClock, SystemClock, TimingWheel } from '../src/index.js';
import { loopGridOriginMs, NativeDriver, originOnLoopGrid } from '../src/wheel/native-driver.js';
import { expectUnknownKey } from '../../../tests/helpers/bad-options.js';

const distEntry = path.resolve(__dirname, '../dist/index.js');

describe('NativeDriver (system clock)', () => {
  describe('#constructor', () => {
    it('refuses an unknown option and a bad yieldToIoWhenLateMs', () => {
      const wake = (): void => undefined;
      expectUnknownKey(
        () => new NativeDriver(new SystemClock(), wake, { yieldToIo: 5 } as never),
        '@tickwheel/core',
        'yieldToIo',
      );
      expect(() => new NativeDriver(new SystemClock(), wake, { yieldToIoWhenLateMs: -1 })).toThrow(
        new RangeError('@tickwheel/core: yieldToIoWhenLateMs must be a finite number of ms >= 0, got -1'),
      );
      new NativeDriver(new SystemClock(), wake, { yieldToIoWhenLateMs: Infinity }).close();
    });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  describe('wake-ups', () => {
    it('makes zero wake-ups while the wheel is empty', async () => {
      const wheel = new TimingWheel();
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(wheel.stats().wakeups).toBe(0);
      wheel.close();
    });

    it('makes zero wake-ups after every timer was cancelled', async () => {
      const wheel = new TimingWheel();
      const handles = Array.from({ length: 100 }, (_, i) => wheel.schedule(5 + i, () => expect.unreachable()));
      for (const h of handles) h.cancel();
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(wheel.stats().wakeups).toBe(0);
      wheel.close();
    });

    it('gives its native timer back when the last timer is cancelled', () => {
      vi.useFakeTimers();
      const wheel = new TimingWheel({ clock: new SystemClock() });
      const before = vi.getTimerCount();
      const handle = wheel.schedule(30_000, () => expect.unreachable());
      expect(vi.getTimerCount() - before).toBe(1);
      handle.cancel();
      expect(vi.getTimerCount() - before).toBe(0);
      vi.advanceTimersByTime(30_000);
      expect(wheel.stats().wakeups).toBe(0);
      wheel.close();
    });

    it('wakes a handful of times, not thousands, for one timer 10 s out (fake timers)', () => {
      vi.useFakeTimers();
      const wheel = new TimingWheel({ clock: new SystemClock() });
      const started = performance.now();
      let firedAfter = -1;
      wheel.schedule(10_000, () => (firedAfter = performance.now() - started));
      vi.advanceTimersByTime(9_999);
      expect(firedAfter).toBe(-1);
      vi.advanceTimersByTime(1);
      expect(firedAfter).toBe(10_000);
      expect(wheel.stats().wakeups).toBeGreaterThanOrEqual(1);
      expect(wheel.stats().wakeups).toBeLessThanOrEqual(5);
      wheel.close();
    });

    it("reaches delays past setTimeout's limit in hops and fires them exactly (fake timers)", () => {
      vi.useFakeTimers();
      const wheel = new TimingWheel({ clock: new SystemClock() });
      const started = performance.now();
      const delay = 30 * 24 * 3600 * 1000; // 30 days > 2^31-1 ms
      let firedAfter = -1;
      wheel.schedule(delay, () => (firedAfter = performance.now() - started));
      vi.advanceTimersByTime(delay - 1);
      expect(firedAfter).toBe(-1);
      vi.advanceTimersByTime(1);
      expect(firedAfter).toBe(delay);
      expect(wheel.stats().wakeups).toBeLessThanOrEqual(6);
      wheel.close();
    });

    it('keeps working when fake timers are installed after the wheel was built', () => {
      const wheel = new TimingWheel();
      vi.useFakeTimers();
      const seen: number[] = [];
      const started = performance.now();
      wheel.schedule(250, () => seen.push(performance.now() - started));
      wheel.schedule(100, () => seen.push(performance.now() - started));
      vi.advanceTimersByTime(300);
      // At most one 1 ms tick late: the real clock's reading had a fraction when fakes took over.
      expect(seen).toHaveLength(2);
      expect(seen[0]).toBeGreaterThanOrEqual(100);
      expect(seen[0]).toBeLessThanOrEqual(101);
      expect(seen[1]).toBeGreaterThanOrEqual(250);
      expect(seen[1]).toBeLessThanOrEqual(251);
      wheel.close();
    });
  });

  describe('real time', () => {
    it('never fires early on the system clock', async () => {
      const wheel = new TimingWheel({ clock: new SystemClock() });
      const clock = new SystemClock({ readOncePerJob: false });
      // Delays count from the job's clock reading (the wheel's first read below), so they are
      // measured from a reading taken just before it, not from each schedule call.
      const start = clock.now();
      const results = await Promise.all(
        [1, 5, 12, 30, 45].map(
          (delay) =>
            new Promise<[number, number]>((resolve) => {
              wheel.schedule(delay, () => resolve([delay, clock.now() - start]));
            }),
        ),
      );
      for (const [delay, elapsed] of results) expect(elapsed).toBeGreaterThanOrEqual(delay);
      wheel.close();
    });

    async function blockedLoopOrder(yieldToIoWhenLateMs: number): Promise<string[]> {
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
      const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
      client.on('error', () => undefined);
      const serverSide = await accepted;
      serverSide.on('error', () => undefined);
      const wheel = new TimingWheel({ yieldToIoWhenLateMs });
      try {
        const events: string[] = [];
        const done = new Promise<void>((resolve) => {
          wheel.schedule(20, () => {
            events.push('timeout');
            resolve();
          });
        });
        client.once('data', () => events.push('response'));
        // The response is written now and reaches the client's socket while the loop is
        // blocked well past the timer's expiry.
        serverSide.write('pong');
        const until = performance.now() + 150;
        while (performance.now() < until);
        await done;
        await new Promise((resolve) => setTimeout(resolve, 5));
        return events;
      } finally {
        wheel.close();
        client.destroy();
        serverSide.destroy();
        await new Promise((resolve) => server.close(resolve));
      }
    }

    it('lets I/O that completed while the loop was blocked land before an expiring timer', async () => {
      expect(await blockedLoopOrder(10)).toEqual(['response', 'timeout']);
    });

    it("expires an unref'ed timer promptly after a blocked loop, even while other handles keep the loop asleep", async () => {
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const keepAlive = setTimeout(() => undefined, 1500);
      const wheel = new TimingWheel();
      try {
        const started = performance.now();
        const firedAfter = new Promise<number>((resolve) => {
          wheel.schedule(50, () => resolve(performance.now() - started)).unref();
        });
        await new Promise((resolve) => setTimeout(resolve, 1));
        const until = performance.now() + 70;
        while (performance.now() < until);
        // Before the fix the yield's unref'ed setImmediate waited for the 1500 ms timer.
        expect(await firedAfter).toBeLessThan(1000);
      } finally {
        clearTimeout(keepAlive);
        wheel.close();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it('expires first when yieldToIoWhenLateMs is Infinity (the undici #3410 failure mode)', async () => {
      expect(await blockedLoopOrder(Infinity)).toEqual(['timeout', 'response']);
    });
  });

  describe("libuv's millisecond grid", () => {
    const LEAD = 2 ** -9;
    const STEP = 2 ** -10;
    /** How far `origin` lies before libuv's boundary, for a reading taken `intoMs` into hrtime's millisecond. */
    const leadOf = (origin: number, reading: number, intoMs: number) => (((reading - intoMs - origin) % 1) + 1) % 1;

    it('begins ticks 2-3 µs before the boundary, never after the reading, on 2^-10 ms steps', () => {
      expect(originOnLoopGrid(1000.25, 0.7)).toBe(999 + 561 / 1024);
      for (const reading of [0, 0.001, 5.5, 1000.25, 123_456.999, 2 ** 40 + 0.75]) {
        for (const intoMs of [0, 0.0001, 0.3, 0.5, 0.998, 0.999999]) {
          const origin = originOnLoopGrid(reading, intoMs);
          expect(origin).toBeLessThanOrEqual(reading);
          expect(origin).toBeGreaterThan(reading - 1);
          expect(Number.isInteger(origin / STEP)).toBe(true);
          const lead = leadOf(origin, reading, intoMs);
          expect(lead).toBeGreaterThanOrEqual(LEAD - 1e-9);
          expect(lead).toBeLessThan(LEAD + STEP + 1e-9);
        }
      }
    });

    it("puts a system-clock wheel's ticks on the grid of process.hrtime", () => {
      const wheel = new TimingWheel();
      // A tick's start lies a whole number of ms from the origin: on the same grid.
      const tickStart = wheel.schedule(5, () => undefined).expiresAt;
      // The closest of five back-to-back pairs, as the wheel reads them (on its clock, which an
      // earlier test's fake timers may have re-based away from performance.now()).
      let best = { span: Infinity, reading: 0, intoMs: 0 };
      for (let i = 0; i < 5; i++) {
        const before = freshNow(wheel.clock);
        const ns = process.hrtime.bigint();
        const after = freshNow(wheel.clock);
        if (after - before < best.span)
          best = { span: after - before, reading: (before + after) / 2, intoMs: Number(ns % 1_000_000n) / 1e6 };
      }
      const lead = leadOf(tickStart, best.reading, best.intoMs);
      expect(lead).toBeGreaterThan(LEAD - 0.002);
      expect(lead).toBeLessThan(LEAD + STEP + 0.002);
      wheel.close();
    });

    it('keeps whole-ms origins on other clocks, fake timers and fractional ticks', () => {
      expect(loopGridOriginMs(new ManualClock(1234.5), 1)).toBe(1234);
      expect(Number.isInteger(loopGridOriginMs(new SystemClock(), 0.5))).toBe(true);
      expect(Number.isInteger(loopGridOriginMs(new SystemClock(), 1000 / 60))).toBe(true);
      vi.useFakeTimers();
      expect(Number.isInteger(loopGridOriginMs(new SystemClock(), 1))).toBe(true);
      const wheel = new TimingWheel({ clock: new SystemClock() });
      expect(Number.isInteger(wheel.schedule(10, () => undefined).expiresAt)).toBe(true);
      wheel.close();
    });

    it('wakes once per sparse timer: no wake-up finds its tick not yet begun', async () => {
      // Scheduled right after a native timer fired, as a wheel's timers mostly are.
      await new Promise((resolve) => setTimeout(resolve, 1));
      const wheel = new TimingWheel();
      const fired: number[] = [];
      const done = new Promise<void>((resolve) => {
        for (let i = 1; i <= 8; i++)
          wheel.schedule(i * 12, (h) => {
            if (freshNow(wheel.clock) >= h.expiresAt) fired.push(i);
            if (i === 8) resolve();
          });
      });
      await done;
      expect(fired).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // A wake-up that found its tick not yet begun would re-arm and wake again (more than 8). A loaded
      // machine can only delay a wake-up until the next timer is due as well, which merges two (fewer).
      expect(wheel.stats().wakeups).toBeLessThanOrEqual(8);
      wheel.close();
    }, 5_000);
  });

  describe('ref / unref', () => {
    function runScript(body: string) {
      return spawnSync(process.execPath, ['-e', `const core = require(${JSON.stringify(distEntry)});\n${body}`], {
        encoding: 'utf8',
        timeout: 10_000,
      });
    }

    it("keeps the process alive while a ref'ed timer is pending", () => {
      const res = runScript(
        `const w = new core.TimingWheel(); const t = Date.now(); w.schedule(300, () => console.log('fired ' + String(Date.now() - t >= 290)));`,
      );
      expect(res.status).toBe(0);
      expect(res.stdout.trim()).toBe('fired true');
    });

    it("lets the process exit when only unref'ed timers are pending", () => {
      const started = Date.now();
      const res = runScript(
        `const w = new core.TimingWheel(); w.schedule(5000, () => console.log('fired')).unref(); w.schedule(5000, () => console.log('fired too')).ref().unref();`,
      );
      expect(res.status).toBe(0);
      expect(res.stdout).toBe('');
      expect(Date.now() - started).toBeLessThan(4000);
    });

    it("holds the process again when an unref'ed timer is ref'ed", () => {
      const res = runScript(
        `const w = new core.TimingWheel(); const h = w.schedule(200, () => console.log('fired')).unref(); h.ref();`,
      );
      expect(res.stdout.trim()).toBe('fired');
    });

    it("lets the process exit after request-at-a-time unref'ed timers, each cancelled in a later job", () => {
      const started = Date.now();
      const res = runScript(
        `const w = new core.TimingWheel(); (async () => { for (let i = 0; i < 50; i++) { const h = w.schedule(5000, () => console.log('fired')).unref(); await null; h.cancel(); await new Promise((r) => setImmediate(r)); } w.schedule(5000, () => console.log('fired')).unref(); })();`,
      );
      expect(res.status).toBe(0);
      expect(res.stdout).toBe('');
      expect(Date.now() - started).toBeLessThan(4000);
    });

    it("holds the process for a ref'ed timer scheduled once unref'ed ones emptied the wheel", () => {
      const res = runScript(
        `const w = new core.TimingWheel(); (async () => { for (let i = 0; i < 50; i++) { const h = w.schedule(5000, () => console.log('unref fired')).unref(); await null; h.cancel(); } w.schedule(200, () => console.log('fired')); })();`,
      );
      expect(res.stdout.trim()).toBe('fired');
    });
  });
});

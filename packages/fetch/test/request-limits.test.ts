import { createDeadline, ManualClock, TimingWheel, type Deadline } from '@tickwheel/core';
import { ownedDeadline } from '@tickwheel/core/internal';
import { beforeEach, describe, expect, it } from 'vitest';
import { resolveOptions } from '../src/options.js';
import { BODY, HEADERS, RequestLimits, SOCKET_BUFFER_BYTES, UPLOAD, type LimitsOwner } from '../src/request-limits.js';
import type { TimeoutError } from '../src/timeout-error.js';
import type { TimeoutOptions } from '../src/types.js';

let clock: ManualClock;
let wheel: TimingWheel;

beforeEach(() => {
  clock = new ManualClock(0);
  wheel = new TimingWheel({ clock });
});

/** The limits alone, owned by a recorder: records what fired, and lets the test say when the body waits on the server. */
class Limits implements LimitsOwner {
  readonly url = 'http://127.0.0.1/';
  readonly method = 'GET';
  readonly fired: Array<{ phase: string; timeoutMs: number; at: number }> = [];
  readonly errors: TimeoutError[] = [];
  readonly limits: RequestLimits;
  /** Whether fetch sent the attempt through the tap (so the connection is seen). */
  observed = true;

  constructor(options: TimeoutOptions, deadlineLeft = Infinity, deadline?: Deadline) {
    this.limits = new RequestLimits(resolveOptions({ wheel, ...options }, undefined, ''), this, deadlineLeft, deadline);
  }

  begin(): void {
    this.limits.startAttempt();
  }

  connected(): void {
    this.limits.connected();
  }

  /** @param events - the body is a scanned event stream (firstEventMs and eventIdleMs apply) */
  headersArrived(waiting: boolean, events = false): void {
    this.limits.waiting = waiting;
    this.limits.startBody(wheel.clock.now(), events);
  }

  /** The scanner found a progress event. */
  progress(): void {
    this.limits.progress();
  }

  /** fetch wants data (its buffer has room): bodyIdleMs runs. */
  wantsData(): void {
    this.limits.startWaiting();
  }

  /** fetch paused the connection (its buffer is full): bodyIdleMs stops. */
  paused(): void {
    this.limits.waiting = false;
  }

  backoff(delayMs: number): Promise<void> {
    return this.limits.backoff(delayMs);
  }

  /** undici asks for the next chunk of the request body (the first time: the upload starts). */
  pulled(): void {
    this.limits.uploadPulled();
  }

  /** A chunk of the request body goes to the network. */
  chunk(bytes: number): void {
    this.limits.uploadChunk(bytes);
  }

  uploadEnded(): void {
    this.limits.uploadEnded();
  }

  get inBody(): boolean {
    return this.limits.phase === BODY;
  }

  limitFired(error: TimeoutError): void {
    this.fired.push({ phase: error.phase, timeoutMs: error.timeoutMs, at: wheel.clock.now() });
    this.errors.push(error);
  }

  connectObserved(): boolean {
    return this.observed;
  }
}

describe('RequestLimits', () => {
  describe('headers phase', () => {
    it('fires headersMs when it comes before totalMs', () => {
      const limits = new Limits({ headersMs: 30, totalMs: 100 });
      limits.begin();
      clock.advance(29);
      expect(limits.fired).toEqual([]);
      clock.advance(1);
      expect(limits.fired).toEqual([{ phase: 'headers', timeoutMs: 30, at: 30 }]);
    });

    it('fires headersMs when it falls together with totalMs', () => {
      const limits = new Limits({ headersMs: 40, totalMs: 40 });
      limits.begin();
      clock.advance(40);
      expect(limits.fired).toEqual([{ phase: 'headers', timeoutMs: 40, at: 40 }]);
    });

    it('fires the ambient deadline as a total timeout when it is the earliest', () => {
      const limits = new Limits({ totalMs: 100 }, 25);
      limits.begin();
      clock.advance(25);
      expect(limits.fired).toEqual([{ phase: 'total', timeoutMs: 25, at: 25 }]);
    });

    it('throws the budget error at once when the deadline has already passed', () => {
      const limits = new Limits({ totalMs: 100 }, 0);
      expect(() => limits.begin()).toThrow(/ambient deadline had already passed/);
      expect(wheel.size).toBe(0);
    });
  });

  describe('upload phase', () => {
    it('stops headersMs while the body goes out and starts it again at the end of the upload', () => {
      const limits = new Limits({ headersMs: 30, totalMs: 10_000 });
      limits.begin();
      clock.advance(10);
      limits.pulled();
      expect(limits.limits.phase).toBe(UPLOAD);
      for (let i = 0; i < 10; i++) {
        limits.chunk(1_000);
        clock.advance(20);
        limits.pulled();
      }
      expect(limits.fired).toEqual([]);
      limits.uploadEnded();
      expect(limits.limits.phase).toBe(HEADERS);
      clock.advance(400);
      expect(limits.fired).toHaveLength(1);
      expect(limits.fired[0]).toMatchObject({ phase: 'headers', timeoutMs: 30 });
    });

    it('keeps headersMs running from the start until the upload starts (the connection is part of it)', () => {
      const limits = new Limits({ headersMs: 30, totalMs: 10_000 });
      limits.begin();
      clock.advance(30);
      expect(limits.fired).toEqual([{ phase: 'headers', timeoutMs: 30, at: 30 }]);
    });

    it('runs uploadIdleMs only while the network has a chunk to carry', () => {
      const limits = new Limits({ uploadIdleMs: 50, totalMs: 10_000 });
      limits.begin();
      limits.pulled();
      clock.advance(500); // the body's source takes its time: not the network's
      limits.chunk(1_000);
      clock.advance(49);
      limits.pulled(); // the chunk left for the OS just in time
      clock.advance(500);
      expect(limits.fired).toEqual([]);
      limits.chunk(1_000);
      clock.advance(50);
      expect(limits.fired).toEqual([{ phase: 'upload', timeoutMs: 50, at: 1_099 }]);
    });

    it('lets an upload that keeps moving live as long as it moves, within totalMs', () => {
      const limits = new Limits({ uploadIdleMs: 50, totalMs: 1_000 });
      limits.begin();
      limits.pulled();
      for (let i = 0; i < 40; i++) {
        limits.chunk(1_000);
        clock.advance(40);
        limits.pulled();
      }
      // Chunks the network took after the limit fired (undici stops once fetch aborts) re-arm nothing.
      expect(limits.fired).toEqual([{ phase: 'total', timeoutMs: 1_000, at: 1_000 }]);
    });

    it('starts headersMs once what the socket buffers may hold could have reached the server at the recent pace', () => {
      const limits = new Limits({ headersMs: 100, totalMs: 60_000 });
      limits.begin();
      limits.pulled();
      // 12 MiB at a steady 64 KiB per 10 ms (6.4 MiB/s): the socket buffers' share takes ~940 ms to drain.
      const chunk = 64 * 1024;
      for (let sent = 0; sent < 12 * 1024 * 1024; sent += chunk) {
        limits.chunk(chunk);
        clock.advance(10);
        limits.pulled();
      }
      const endedAt = wheel.clock.now();
      limits.uploadEnded();
      const drainMs = (SOCKET_BUFFER_BYTES / chunk) * 10;
      clock.advance(drainMs + 99);
      expect(limits.fired).toEqual([]);
      clock.advance(100); // the wheel fires a far expiry within its level's tick, never early
      expect(limits.fired).toHaveLength(1);
      expect(limits.fired[0].at - endedAt).toBeGreaterThanOrEqual(drainMs + 100);
    });

    it('adds no more to headersMs than the upload took, nor more than its bytes need at its pace', () => {
      const limits = new Limits({ headersMs: 100, totalMs: 60_000 });
      limits.begin();
      limits.pulled();
      limits.chunk(1_000);
      clock.advance(10);
      limits.pulled();
      limits.uploadEnded();
      clock.advance(109);
      expect(limits.fired).toEqual([]);
      clock.advance(2);
      expect(limits.fired).toEqual([{ phase: 'headers', timeoutMs: 100, at: 120 }]);
    });
  });

  describe('body phase', () => {
    it('runs bodyIdleMs only while the body waits on the server, and totalMs throughout', () => {
      const limits = new Limits({ bodyIdleMs: 20, totalMs: 100 });
      limits.begin();
      clock.advance(10);
      limits.headersArrived(true);
      expect(limits.inBody).toBe(true);
      clock.advance(15);
      limits.wantsData(); // a chunk arrived and fetch wants more: the idle limit starts again
      clock.advance(15);
      limits.paused(); // fetch's buffer is full: the consumer, not the server, is behind
      clock.advance(50);
      expect(limits.fired).toEqual([]);
      clock.advance(20);
      expect(limits.fired).toEqual([{ phase: 'total', timeoutMs: 100, at: 100 }]);
    });

    it('fires bodyIdleMs after the last chunk while fetch waits on a stalled server', () => {
      const limits = new Limits({ bodyIdleMs: 20, totalMs: 1_000 });
      limits.begin();
      limits.headersArrived(true);
      clock.advance(5);
      limits.wantsData();
      clock.advance(19);
      expect(limits.fired).toEqual([]);
      clock.advance(1);
      expect(limits.fired).toEqual([{ phase: 'body', timeoutMs: 20, at: 25 }]);
    });

    it('does not run bodyIdleMs from the headers when fetch is paused by then', () => {
      const limits = new Limits({ bodyIdleMs: 20, totalMs: 200 });
      limits.begin();
      limits.headersArrived(false);
      clock.advance(150);
      expect(limits.fired).toEqual([]);
      limits.wantsData(); // the consumer read: fetch asks the server for more
      clock.advance(20);
      expect(limits.fired).toEqual([{ phase: 'body', timeoutMs: 20, at: 170 }]);
    });

    it('runs one handle for the whole request, re-pointed per phase and refreshed lazily per chunk', () => {
      const limits = new Limits({ headersMs: 50, bodyIdleMs: 20, totalMs: 10_000 });
      limits.begin();
      clock.advance(10);
      limits.headersArrived(true);
      for (let i = 0; i < 100; i++) {
        clock.advance(5);
        limits.wantsData();
      }
      expect(wheel.stats().scheduled).toBe(1);
      expect(wheel.stats().fired).toBe(0);
      expect(limits.fired).toEqual([]);
    });
  });

  describe('event stream', () => {
    it('fires firstEventMs when no progress event follows the headers in time', () => {
      const limits = new Limits({ firstEventMs: 100, eventIdleMs: 20, totalMs: 10_000 });
      limits.begin();
      clock.advance(10);
      limits.headersArrived(true, true);
      for (let i = 0; i < 9; i++) {
        clock.advance(10);
        limits.wantsData(); // keep-alive comments: bytes, no event
      }
      expect(limits.fired).toEqual([]);
      clock.advance(10);
      expect(limits.fired).toEqual([{ phase: 'first-event', timeoutMs: 100, at: 110 }]);
    });

    it('fires eventIdleMs after the last progress event, whatever bytes keep coming', () => {
      const limits = new Limits({ firstEventMs: 100, eventIdleMs: 30, bodyIdleMs: 15, totalMs: 10_000 });
      limits.begin();
      limits.headersArrived(true, true);
      for (let i = 0; i < 5; i++) {
        clock.advance(10);
        limits.wantsData(); // a comment keeps bodyIdleMs satisfied
      }
      limits.progress(); // at 50
      for (let i = 0; i < 2; i++) {
        clock.advance(10);
        limits.wantsData();
      }
      expect(limits.fired).toEqual([]);
      clock.advance(10);
      expect(limits.fired).toEqual([{ phase: 'event-idle', timeoutMs: 30, at: 80 }]);
    });

    it('lets a slow stream whose events keep coming live, within totalMs', () => {
      const limits = new Limits({ firstEventMs: 40, eventIdleMs: 40, totalMs: 1_000 });
      limits.begin();
      limits.headersArrived(true, true);
      for (let at = 35; at < 1_000; at += 35) {
        clock.advance(35);
        limits.progress();
        limits.wantsData();
      }
      expect(limits.fired).toEqual([]);
      clock.advance(20);
      expect(limits.fired).toEqual([{ phase: 'total', timeoutMs: 1_000, at: 1_000 }]);
    });

    it('runs eventIdleMs from the headers when firstEventMs is off', () => {
      const limits = new Limits({ eventIdleMs: 25 });
      limits.begin();
      clock.advance(5);
      limits.headersArrived(true, true);
      clock.advance(25);
      expect(limits.fired).toEqual([{ phase: 'event-idle', timeoutMs: 25, at: 30 }]);
    });

    it('stops timing events after the first one when only firstEventMs is set', () => {
      const limits = new Limits({ firstEventMs: 25 });
      limits.begin();
      limits.headersArrived(true, true);
      clock.advance(20);
      limits.progress();
      clock.advance(10_000);
      expect(limits.fired).toEqual([]);
    });

    it('counts a progress event seen before the headers were handed out: eventIdleMs runs from them', () => {
      const limits = new Limits({ firstEventMs: 10, eventIdleMs: 50 });
      limits.begin();
      limits.progress();
      limits.headersArrived(true, true);
      clock.advance(49);
      expect(limits.fired).toEqual([]);
      clock.advance(1);
      expect(limits.fired).toEqual([{ phase: 'event-idle', timeoutMs: 50, at: 50 }]);
    });

    it('does not apply to a body that is no event stream', () => {
      const limits = new Limits({ firstEventMs: 10, eventIdleMs: 10 });
      limits.begin();
      limits.headersArrived(true, false);
      clock.advance(10_000);
      expect(limits.fired).toEqual([]);
    });

    it('does not count the time fetch is paused by a consumer that does not read, and restarts once it reads', () => {
      const limits = new Limits({ eventIdleMs: 20 });
      limits.begin();
      limits.headersArrived(true, true);
      clock.advance(10);
      limits.progress();
      limits.paused();
      clock.advance(500);
      expect(limits.fired).toEqual([]);
      limits.wantsData();
      clock.advance(19);
      expect(limits.fired).toEqual([]);
      clock.advance(1);
      expect(limits.fired).toEqual([{ phase: 'event-idle', timeoutMs: 20, at: 530 }]);
    });

    it('keeps to the one handle of the request, refreshed lazily per progress event', () => {
      const limits = new Limits({ firstEventMs: 100, eventIdleMs: 20, bodyIdleMs: 20, totalMs: 100_000 });
      limits.begin();
      limits.headersArrived(true, true);
      for (let i = 0; i < 100; i++) {
        clock.advance(5);
        limits.progress();
        limits.wantsData();
      }
      expect(wheel.stats().scheduled).toBe(1);
      expect(limits.fired).toEqual([]);
    });
  });

  describe('#backoff', () => {
    it('waits the delay on the one timer of the request, then resolves', async () => {
      const limits = new Limits({ headersMs: 10 });
      limits.begin();
      clock.advance(10);
      let done = false;
      const backoff = limits.backoff(30).then(() => (done = true));
      clock.advance(29);
      await Promise.resolve();
      expect(done).toBe(false);
      expect(wheel.size).toBe(1);
      clock.advance(1);
      await backoff;
      expect(done).toBe(true);
      expect(wheel.size).toBe(0);
    });
  });

  describe('connect phase', () => {
    it('fires connectMs when no connection could carry the request in time', () => {
      const limits = new Limits({ connectMs: 20, headersMs: 50, totalMs: 100 });
      limits.begin();
      clock.advance(19);
      expect(limits.fired).toEqual([]);
      clock.advance(1);
      expect(limits.fired).toEqual([{ phase: 'connect', timeoutMs: 20, at: 20 }]);
    });

    it('starts headersMs when the request is sent', () => {
      const limits = new Limits({ connectMs: 20, headersMs: 50, totalMs: 1_000 });
      limits.begin();
      clock.advance(15);
      limits.connected();
      clock.advance(49);
      expect(limits.fired).toEqual([]);
      clock.advance(1);
      expect(limits.fired).toEqual([{ phase: 'headers', timeoutMs: 50, at: 65 }]);
    });

    it('spends nothing in it on a pooled connection: connected at once, headersMs from the start', () => {
      const limits = new Limits({ connectMs: 20, headersMs: 50 });
      limits.begin();
      limits.connected();
      clock.advance(50);
      expect(limits.fired).toEqual([{ phase: 'headers', timeoutMs: 50, at: 50 }]);
    });

    it('reports totalMs when it comes before connectMs', () => {
      const limits = new Limits({ connectMs: 80, totalMs: 80 });
      limits.begin();
      clock.advance(80);
      expect(limits.fired).toEqual([{ phase: 'connect', timeoutMs: 80, at: 80 }]);
      const budget = new Limits({ connectMs: 80, totalMs: 100 }, 30);
      budget.begin();
      clock.advance(30);
      expect(budget.fired).toEqual([{ phase: 'total', timeoutMs: 30, at: 110 }]);
    });

    it('falls back to headersMs from the start for a fetch whose connection cannot be seen', () => {
      const limits = new Limits({ connectMs: 20, headersMs: 50 });
      limits.observed = false;
      limits.begin();
      clock.advance(20);
      expect(limits.fired).toEqual([]);
      clock.advance(30);
      expect(limits.fired).toEqual([{ phase: 'headers', timeoutMs: 50, at: 50 }]);
    });
  });

  describe('reserveMs and minBudgetMs (ambient deadline)', () => {
    it('shortens a budget taken from the ambient deadline by reserveMs', () => {
      const limits = new Limits({ reserveMs: 30 }, 100);
      limits.begin();
      clock.advance(69);
      expect(limits.fired).toEqual([]);
      clock.advance(1);
      expect(limits.fired).toEqual([{ phase: 'total', timeoutMs: 70, at: 70 }]);
    });

    it('does not shorten a limit of its own', () => {
      const limits = new Limits({ reserveMs: 30, totalMs: 50 }, 1_000);
      limits.begin();
      clock.advance(50);
      expect(limits.fired).toEqual([{ phase: 'total', timeoutMs: 50, at: 50 }]);
    });

    it('refuses to start an attempt with less than minBudgetMs left after the reserve', () => {
      const limits = new Limits({ reserveMs: 20, minBudgetMs: 50 }, 62);
      expect(() => limits.begin()).toThrow(
        expect.objectContaining({
          name: 'TimeoutError',
          phase: 'total',
          timeoutMs: 62,
          message:
            'GET http://127.0.0.1/: 62 ms left of the ambient deadline, below minBudgetMs 50 after reserveMs 20; fetch was not called; ' +
            'the deadline of 62 ms from an unknown source: 0 ms spent before this call, 0 ms in it',
        }),
      );
      expect(wheel.size).toBe(0);
      const enough = new Limits({ reserveMs: 20, minBudgetMs: 50 }, 70);
      expect(() => enough.begin()).not.toThrow();
    });

    it('refuses to start when the reserve takes all that is left', () => {
      const limits = new Limits({ reserveMs: 100 }, 60);
      expect(() => limits.begin()).toThrow(expect.objectContaining({ phase: 'total', timeoutMs: 60 }));
    });

    it('keeps saying that a deadline which had passed had passed', () => {
      const limits = new Limits({ reserveMs: 10, minBudgetMs: 50 }, 0);
      expect(() => limits.begin()).toThrow(/the ambient deadline had already passed/);
    });
  });

  describe('budget', () => {
    it("names its own limit that fired, the request's time and the phases of its attempt", () => {
      const limits = new Limits({ connectMs: 10, headersMs: 30, totalMs: 1000 });
      limits.begin();
      clock.advance(4);
      limits.connected();
      clock.advance(30);
      const [error] = limits.errors;
      expect(Object.isFrozen(error.budget)).toBe(true);
      expect(error.budget).toEqual({
        limit: 'headersMs',
        inherited: false,
        source: undefined,
        budgetMs: 30,
        spentBeforeMs: 0,
        elapsedMs: 34,
        lateMs: 0,
        attempts: 1,
        backoffMs: [],
        phasesMs: { connect: 4, upload: 0, headers: 30, body: 0 },
      });
      expect(error.message).toBe(
        'GET http://127.0.0.1/: no response headers within 30 ms (headersMs); headersMs of 30 ms: 34 ms in this call',
      );
    });

    it('counts the attempts and backoff waits before the one that timed out, and its upload and body phases', async () => {
      const limits = new Limits({ headersMs: 50, bodyIdleMs: 20, totalMs: 10_000 });
      limits.begin();
      clock.advance(50); // the first attempt's headersMs
      const waited = limits.backoff(100);
      clock.advance(100);
      await waited;
      limits.begin();
      limits.pulled();
      clock.advance(5);
      limits.uploadEnded();
      clock.advance(7);
      limits.headersArrived(true);
      clock.advance(20);
      const error = limits.errors[1];
      expect(error.budget).toMatchObject({
        limit: 'bodyIdleMs',
        budgetMs: 20,
        elapsedMs: 182,
        attempts: 2,
        backoffMs: [100],
        phasesMs: { connect: 0, upload: 5, headers: 7, body: 20 },
      });
      expect(error.message).toMatch(
        /\(attempt 2, after backoffs of 100 ms\); bodyIdleMs of 20 ms: 182 ms in this call$/,
      );
    });

    it("names the ambient deadline's source, its whole budget and what was gone before the request", () => {
      const outer = ownedDeadline(2000, wheel, { deadlineAborted() {} }, false, 'header:grpc-timeout');
      clock.advance(1200);
      const deadline = outer.run(() => createDeadline(5000));
      const limits = new Limits({ totalMs: 10_000 }, deadline.remaining(), deadline);
      limits.begin();
      clock.advance(800);
      const [error] = limits.errors;
      expect(error.budget).toMatchObject({
        limit: 'deadline',
        inherited: true,
        source: 'header:grpc-timeout',
        budgetMs: 2000,
        spentBeforeMs: 1200,
        elapsedMs: 800,
        lateMs: 0,
      });
      expect(error.message).toBe(
        'GET http://127.0.0.1/: not complete within the 800 ms left of the ambient deadline; ' +
          'the deadline of 2000 ms from header:grpc-timeout: 1200 ms spent before this call, 800 ms in it',
      );
      deadline.dispose();
      outer.dispose();
    });

    it('names minBudgetMs and the deadline when too little was left to start', () => {
      const deadline = createDeadline(100, { wheel });
      clock.advance(70);
      const limits = new Limits({ minBudgetMs: 50 }, deadline.remaining(), deadline);
      let thrown: TimeoutError | undefined;
      try {
        limits.begin();
      } catch (error) {
        thrown = error as TimeoutError;
      }
      expect(thrown?.budget).toMatchObject({
        limit: 'minBudgetMs',
        inherited: true,
        source: 'createDeadline',
        budgetMs: 100,
        spentBeforeMs: 70,
        elapsedMs: 0,
        attempts: 0,
      });
      deadline.dispose();
    });
  });
});

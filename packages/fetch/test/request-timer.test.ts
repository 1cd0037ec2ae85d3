import { getEventListeners } from 'node:events';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { beforeEach, describe, expect, it } from 'vitest';
import { resolveOptions } from '../src/options.js';
import { RequestTimer } from '../src/request-timer.js';
import { TimeoutError } from '../src/timeout-error.js';
import type { TimeoutOptions } from '../src/types.js';
import { settle } from './helpers/scripted-fetch.js';

let clock: ManualClock;
let wheel: TimingWheel;

beforeEach(() => {
  clock = new ManualClock(0);
  wheel = new TimingWheel({ clock });
});

const TARGET = 'http://127.0.0.1/';

/** A RequestTimer for a request to TARGET with `options` resolved as the wrapper does. */
function timerFor(options: TimeoutOptions, method = 'GET', signal?: AbortSignal): RequestTimer {
  return new RequestTimer(resolveOptions(options, undefined, ''), TARGET, method, signal, undefined);
}

function streamed(): { response: Response; push: (text: string) => void; end: () => void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const response = new Response(new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) }));
  return {
    response,
    push: (text) => controller.enqueue(new TextEncoder().encode(text)),
    end: () => controller.close(),
  };
}

describe('RequestTimer', () => {
  describe('#beginAttempt', () => {
    it('returns a fresh signal per attempt and arms the earlier of headersMs and totalMs', () => {
      const timer = timerFor({ headersMs: 30, totalMs: 100, wheel });
      const signal = timer.beginAttempt();
      clock.advance(30);
      expect(signal.aborted).toBe(true);
      expect(signal.reason).toBeInstanceOf(TimeoutError);
      expect((signal.reason as TimeoutError).phase).toBe('headers');
      expect(timer.beginAttempt()).not.toBe(signal);
      timer.finish();
    });
  });

  describe('#responseArrived', () => {
    it('re-points the one handle from the headers to the body, and refreshes it lazily per chunk', async () => {
      const timer = timerFor({ headersMs: 30, bodyIdleMs: 20, totalMs: 10_000, wheel });
      timer.beginAttempt();
      const { response, push, end } = streamed();
      clock.advance(10);
      // Not dispatched through the tap (no fetch here): the body is timed on a rebuilt Response.
      const res = timer.responseArrived(response);
      expect(res).toBeInstanceOf(Response);
      const text = res.text();
      for (let i = 0; i < 50; i++) {
        await settle();
        clock.advance(10);
        push('.');
      }
      end();
      expect((await text).length).toBe(50);
      const stats = wheel.stats();
      expect(stats.scheduled).toBe(1);
      expect(stats.fired).toBe(0);
      expect(stats.cancelled).toBe(1);
      expect(stats.refiled).toBeGreaterThan(0);
      expect(wheel.size).toBe(0);
    });

    it('releases everything at once when nothing times the body', () => {
      const timer = timerFor({ headersMs: 30, wheel });
      timer.beginAttempt();
      const { response } = streamed();
      expect(timer.responseArrived(response)).toBe(response);
      expect(wheel.size).toBe(0);
      expect(Object.getPrototypeOf(response)).toBe(Response.prototype);
    });

    it('keeps the caller listener until the body is done, then removes it', async () => {
      const caller = new AbortController();
      const timer = timerFor({ headersMs: 30, wheel }, 'GET', caller.signal);
      timer.beginAttempt();
      const { response, push, end } = streamed();
      const text = timer.responseArrived(response).text();
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
      push('ok');
      end();
      expect(await text).toBe('ok');
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    });

    it('throws the timeout that fired before the response was handled', () => {
      const timer = timerFor({ headersMs: 30, wheel });
      timer.beginAttempt();
      clock.advance(30);
      expect(() => timer.responseArrived(streamed().response)).toThrow(TimeoutError);
    });
  });

  describe('#retryDelay', () => {
    it('backs off by backoffFactor, and not past the budget', () => {
      const options = resolveOptions(
        { headersMs: 10, wheel, retry: { limit: 5, backoffMs: 10, backoffFactor: 2, budgetMs: 100 } },
        undefined,
        '',
      );
      const timer = new RequestTimer(options, TARGET, 'GET', undefined, undefined);
      const delays: Array<number | undefined> = [];
      for (let attempt = 0; attempt < 4; attempt++) {
        const signal = timer.beginAttempt();
        clock.advance(10);
        const error = timer.attemptFailed(signal.reason);
        const delay = timer.retryDelay(error, attempt);
        delays.push(delay);
        if (delay === undefined) break;
        clock.advance(delay);
      }
      // Attempts start at 0, 20, 50; the next would wait 40 ms from 60, past the 100 ms budget.
      expect(delays).toEqual([10, 20, undefined]);
      timer.finish();
    });

    it('never retries a method that is not listed, nor an error that is not its own timeout', () => {
      const options = resolveOptions({ headersMs: 10, wheel, retry: 3 }, undefined, '');
      const post = new RequestTimer(options, TARGET, 'POST', undefined, undefined);
      const signal = post.beginAttempt();
      clock.advance(10);
      expect(post.retryDelay(post.attemptFailed(signal.reason), 0)).toBeUndefined();
      const get = new RequestTimer(options, TARGET, 'GET', undefined, undefined);
      get.beginAttempt();
      expect(get.retryDelay(new TypeError('fetch failed'), 0)).toBeUndefined();
      post.finish();
      get.finish();
    });
  });
});

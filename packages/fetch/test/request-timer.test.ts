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

/**
 * A timer whose first attempt was dispatched through its tap (bodyIdleMs 20, totalMs 1000), with
 * the handler the tap gave undici (`wire`, driven by the test as undici would) and fetch's
 * `resume` once the headers passed. `more`: what fetch's onData answers (false: pause).
 */
function tapped(): {
  timer: RequestTimer;
  signal: AbortSignal;
  wire: Record<string, (...args: unknown[]) => unknown>;
  fetchSide: { more: boolean; resume: () => void };
} {
  const handlers: Array<Record<string, (...args: unknown[]) => unknown>> = [];
  const dispatcher = { dispatch: (_options: unknown, handler: object) => (handlers.push(handler as never), true) };
  const options = resolveOptions({ bodyIdleMs: 20, totalMs: 1_000, wheel }, undefined, '');
  const timer = new RequestTimer(options, TARGET, 'GET', undefined, undefined, dispatcher);
  const signal = timer.beginAttempt();
  const fetchSide = { more: true, resume: () => {} };
  timer.tap!.dispatch(
    {},
    {
      onHeaders: (_status: number, _headers: unknown, resume: () => void) => ((fetchSide.resume = resume), true),
      onData: () => fetchSide.more,
      onComplete: () => {},
    },
  );
  const wire = handlers[0];
  wire.onHeaders(200, [], () => {}, 'OK');
  return { timer, signal, wire, fetchSide };
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

    it('follows the body at the tap: idle while fetch wants data, paused with fetch, done when it has arrived', () => {
      const { timer, signal, wire, fetchSide } = tapped();
      const { response } = streamed();
      expect(timer.responseArrived(response)).toBe(response);
      clock.advance(15);
      wire.onData(new Uint8Array(1)); // a chunk: the idle limit starts again
      clock.advance(15);
      fetchSide.more = false;
      wire.onData(new Uint8Array(1)); // fetch's buffer is full: it pauses, and so does the idle limit
      clock.advance(100);
      expect(signal.aborted).toBe(false);
      fetchSide.resume(); // the caller read: fetch asks for more, the idle limit runs again
      clock.advance(15);
      wire.onData(new Uint8Array(1));
      wire.onComplete([]); // arrived, unread: the request is complete
      expect(wheel.size).toBe(0);
      expect(signal.aborted).toBe(false);
    });

    it('runs bodyIdleMs again when fetch resumes a paused connection', () => {
      const { timer, signal, wire, fetchSide } = tapped();
      fetchSide.more = false;
      wire.onData(new Uint8Array(1)); // paused at once
      timer.responseArrived(streamed().response);
      clock.advance(500);
      expect(signal.aborted).toBe(false);
      fetchSide.resume();
      clock.advance(20);
      expect(signal.reason).toMatchObject({ name: 'TimeoutError', phase: 'body', timeoutMs: 20 });
    });

    it('fires bodyIdleMs when fetch wants data and none arrives, whether or not the caller reads', () => {
      const { timer, signal, wire } = tapped();
      timer.responseArrived(streamed().response);
      wire.onData(new Uint8Array(1));
      clock.advance(20);
      expect(signal.reason).toMatchObject({ name: 'TimeoutError', phase: 'body', timeoutMs: 20 });
      expect(wheel.size).toBe(0);
    });

    it('throws the timeout that fired before the response was handled', () => {
      const timer = timerFor({ headersMs: 30, wheel });
      timer.beginAttempt();
      clock.advance(30);
      expect(() => timer.responseArrived(streamed().response)).toThrow(TimeoutError);
    });
  });

  describe('#retryAfterError', () => {
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
        const delay = timer.retryAfterError(error, attempt);
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
      expect(post.retryAfterError(post.attemptFailed(signal.reason), 0)).toBeUndefined();
      const get = new RequestTimer(options, TARGET, 'GET', undefined, undefined);
      get.beginAttempt();
      expect(get.retryAfterError(new TypeError('fetch failed'), 0)).toBeUndefined();
      post.finish();
      get.finish();
    });
  });

  describe('#retryAfterError with a connect timeout', () => {
    it('retries a connect timeout for any method: nothing was sent', () => {
      const options = resolveOptions({ connectMs: 10, wheel, retry: { limit: 1, backoffMs: 5 } }, undefined, '');
      const post = new RequestTimer(options, TARGET, 'POST', undefined, undefined, { dispatch: () => true });
      const signal = post.beginAttempt();
      post.tap!.dispatch({}, {}); // fetch sent it through the tap; no connection came
      clock.advance(10);
      expect(signal.reason).toMatchObject({ name: 'TimeoutError', phase: 'connect' });
      expect(post.retryAfterError(post.attemptFailed(signal.reason), 0)).toBe(5);
      post.finish();
    });
  });

  describe('#retryAfterError with a network error', () => {
    it('retries fetch failed only with retryOnNetworkError, and only for retried methods', () => {
      const failed = new TypeError('fetch failed');
      const asked = resolveOptions(
        { wheel, retry: { limit: 1, backoffMs: 5, retryOnNetworkError: true } },
        undefined,
        '',
      );
      const get = new RequestTimer(asked, TARGET, 'GET', undefined, undefined);
      get.beginAttempt();
      expect(get.retryAfterError(get.attemptFailed(failed), 0)).toBe(5);
      expect(get.retryAfterError(new TypeError('Invalid URL'), 0)).toBeUndefined();
      const post = new RequestTimer(asked, TARGET, 'POST', undefined, undefined);
      post.beginAttempt();
      expect(post.retryAfterError(failed, 0)).toBeUndefined();
      const notAsked = new RequestTimer(
        resolveOptions({ wheel, retry: 1 }, undefined, ''),
        TARGET,
        'GET',
        undefined,
        undefined,
      );
      notAsked.beginAttempt();
      expect(notAsked.retryAfterError(failed, 0)).toBeUndefined();
      for (const timer of [get, post, notAsked]) timer.finish();
    });
  });
});

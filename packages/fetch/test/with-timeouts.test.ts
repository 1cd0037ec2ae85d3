import { getEventListeners } from 'node:events';
import { createDeadline, ManualClock, TimingWheel, withDeadline } from '@tickwheel/core';
import { beforeEach, describe, expect, it } from 'vitest';
import { TimeoutError } from '../src/timeout-error.js';
import { withTimeouts } from '../src/with-timeouts.js';
import { captureWarnings } from '../../../tests/helpers/process-warnings.js';
import { rejectionOf, ScriptedFetch, settle, track } from './helpers/scripted-fetch.js';

const URL_A = 'http://127.0.0.1:1/a';

let clock: ManualClock;
let wheel: TimingWheel;
let server: ScriptedFetch;

beforeEach(() => {
  clock = new ManualClock(0);
  wheel = new TimingWheel({ clock });
  server = new ScriptedFetch();
});

describe('withTimeouts', () => {
  it('throws a TypeError at once when fetchFn is not a function', () => {
    expect(() => withTimeouts(42 as never)).toThrow(/fetchFn must be a function, got 42/);
  });

  it('throws a RangeError at construction for headersMs larger than totalMs', () => {
    expect(() => withTimeouts(server.fetch, { totalMs: 100, headersMs: 500 })).toThrow(RangeError);
  });

  describe('headers phase', () => {
    it('rejects with a TimeoutError exactly when headersMs passes, and aborts the fetch with it', async () => {
      const timed = withTimeouts(server.fetch, { headersMs: 50, totalMs: 1_000, wheel });
      const state = track(timed(URL_A));
      clock.advance(49);
      await settle();
      expect(state.settled).toBe(false);
      clock.advance(1);
      await settle();
      const error = state.error as TimeoutError;
      expect(error).toBeInstanceOf(TimeoutError);
      expect(error).toMatchObject({ name: 'TimeoutError', phase: 'headers', timeoutMs: 50, url: URL_A, method: 'GET' });
      expect(server.last.signal.reason).toBe(error);
      expect(wheel.size).toBe(0);
    });

    it('stops the headers limit when the response arrives in time', async () => {
      const timed = withTimeouts(server.fetch, { headersMs: 50, wheel });
      const pending = timed(URL_A);
      clock.advance(40);
      server.last.respond();
      const res = await pending;
      clock.advance(100);
      server.last.push('late but fine');
      server.last.end();
      expect(await res.text()).toBe('late but fine');
      expect(server.last.signal.aborted).toBe(false);
      expect(wheel.size).toBe(0);
    });

    it('reports totalMs, not headersMs, when totalMs comes first', async () => {
      const timed = withTimeouts(server.fetch, { totalMs: 30, wheel });
      const state = track(timed(URL_A, { method: 'post' }));
      clock.advance(30);
      await settle();
      expect(state.error).toMatchObject({ phase: 'total', timeoutMs: 30, method: 'POST' });
    });
  });

  describe('body phase', () => {
    it('errors the body with a body TimeoutError after bodyIdleMs without a chunk while reading', async () => {
      const timed = withTimeouts(server.fetch, { bodyIdleMs: 20, wheel });
      const pending = timed(URL_A);
      server.last.respond();
      const reader = (await pending).body!.getReader();
      for (let i = 0; i < 5; i++) {
        const read = reader.read();
        await settle();
        clock.advance(19);
        server.last.push(`chunk${i}`);
        expect((await read).done).toBe(false);
      }
      const stalled = track(reader.read());
      await settle(); // let the stream pull: the idle limit runs from there
      clock.advance(19);
      await settle();
      expect(stalled.settled).toBe(false);
      clock.advance(1);
      await settle();
      expect(stalled.error).toMatchObject({ name: 'TimeoutError', phase: 'body', timeoutMs: 20 });
      expect(server.last.signal.reason).toBe(stalled.error);
      expect(wheel.size).toBe(0);
    });

    it('does not count the time the consumer spends between reads', async () => {
      const timed = withTimeouts(server.fetch, { bodyIdleMs: 20, wheel });
      const pending = timed(URL_A);
      server.last.respond();
      const reader = (await pending).body!.getReader();
      server.last.push('a');
      expect((await reader.read()).value).toBeDefined();
      clock.advance(500); // the consumer is busy, the server is not to blame
      await settle();
      const next = reader.read();
      clock.advance(10);
      server.last.push('b');
      server.last.end();
      expect(new TextDecoder().decode((await next).value)).toBe('b');
      expect((await reader.read()).done).toBe(true);
      expect(wheel.size).toBe(0);
    });

    it('errors the body with a total TimeoutError when totalMs passes while reading', async () => {
      const timed = withTimeouts(server.fetch, { totalMs: 100, bodyIdleMs: 50, wheel });
      const pending = timed(URL_A);
      clock.advance(30);
      server.last.respond();
      const text = track((await pending).text());
      for (let t = 30; t < 100; t += 10) {
        server.last.push('x');
        await settle();
        clock.advance(10);
      }
      await settle();
      expect(text.error).toMatchObject({ phase: 'total', timeoutMs: 100 });
    });

    it('uses one wheel handle per request and releases it when the body ends', async () => {
      const timed = withTimeouts(server.fetch, { headersMs: 50, bodyIdleMs: 20, totalMs: 1_000, wheel });
      const before = wheel.stats().scheduled;
      const pending = timed(URL_A);
      clock.advance(10);
      server.last.respond();
      const text = (await pending).text();
      for (let i = 0; i < 10; i++) {
        await settle();
        clock.advance(5);
        server.last.push('.');
      }
      server.last.end();
      expect(await text).toBe('..........');
      expect(wheel.stats().scheduled - before).toBe(1);
      expect(wheel.size).toBe(0);
    });

    it('releases everything at the headers for a response without a body', async () => {
      const timed = withTimeouts(server.fetch, { totalMs: 100, wheel });
      const pending = timed(URL_A, { method: 'HEAD' });
      server.last.respondEmpty(204);
      expect((await pending).status).toBe(204);
      expect(wheel.size).toBe(0);
    });

    it('keeps the response class, status, headers and url', async () => {
      const timed = withTimeouts(server.fetch, { totalMs: 100, wheel });
      const pending = timed(URL_A);
      server.last.respond(201);
      const res = await pending;
      expect(res).toBeInstanceOf(Response);
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toBe('text/plain');
      server.last.end();
      expect(await res.text()).toBe('');
    });

    it('releases the timer when the consumer cancels the body', async () => {
      const timed = withTimeouts(server.fetch, { totalMs: 100, wheel });
      const pending = timed(URL_A);
      server.last.respond();
      const res = await pending;
      expect(wheel.size).toBe(1);
      await res.body!.cancel('not interested');
      expect(wheel.size).toBe(0);
    });
  });

  describe('per-request timeouts', () => {
    it('overrides the wrapper options and is removed from the init fetch receives', async () => {
      const timed = withTimeouts(server.fetch, { headersMs: 50, wheel });
      const state = track(timed(URL_A, { headers: { a: '1' }, timeouts: { headersMs: 10 } }));
      expect(server.last.init).not.toHaveProperty('timeouts');
      expect(server.last.init).toMatchObject({ headers: { a: '1' } });
      clock.advance(10);
      await settle();
      expect(state.error).toMatchObject({ phase: 'headers', timeoutMs: 10 });
    });

    it('switches a limit off with false, the deprecated spelling of 0, and says so once', async () => {
      const timed = withTimeouts(server.fetch, { headersMs: 50, wheel });
      const { result: state, warnings } = await captureWarnings(() =>
        track(timed(URL_A, { timeouts: { headersMs: false } })),
      );
      expect(warnings.map((w) => [w.name, w.message])).toEqual([
        [
          'DeprecationWarning',
          '@tickwheel/fetch: timeouts.headersMs: false is deprecated as "no limit" and stops working in 1.0; pass 0 (or Infinity)',
        ],
      ]);
      clock.advance(10_000);
      await settle();
      expect(state.settled).toBe(false);
      expect(wheel.size).toBe(0);
      server.last.respondEmpty();
      await settle();
      expect(state.value).toBeInstanceOf(Response);
    });

    it('rejects, naming the option, for a bad per-request value', async () => {
      const timed = withTimeouts(server.fetch, { totalMs: 100, wheel });
      const error = await rejectionOf(timed(URL_A, { timeouts: { headersMs: 200 } }));
      expect(error).toBeInstanceOf(RangeError);
      expect((error as Error).message).toBe(
        '@tickwheel/fetch: timeouts.headersMs must not exceed totalMs (100), got 200',
      );
      expect(server.calls).toHaveLength(0);
    });

    it('passes requests straight through when nothing times them', async () => {
      const timed = withTimeouts(server.fetch);
      const init = { method: 'GET' };
      const pending = timed(URL_A, init);
      expect(server.last.init).toBe(init);
      server.last.respondEmpty();
      await pending;
    });
  });

  describe('caller signal', () => {
    it('rejects with the caller reason, not a TimeoutError, and removes its listener', async () => {
      const caller = new AbortController();
      const timed = withTimeouts(server.fetch, { headersMs: 50, wheel });
      const pending = timed(URL_A, { signal: caller.signal });
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
      const reason = new Error('user gave up');
      caller.abort(reason);
      expect(await rejectionOf(pending)).toBe(reason);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
      expect(wheel.size).toBe(0);
    });

    it('errors the body with the caller reason when aborted mid-body', async () => {
      const caller = new AbortController();
      const timed = withTimeouts(server.fetch, { totalMs: 1_000, wheel });
      const pending = timed(URL_A, { signal: caller.signal });
      server.last.respond();
      const text = (await pending).text();
      server.last.push('partial');
      await settle();
      caller.abort('stop');
      expect(await rejectionOf(text)).toBe('stop');
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
      expect(wheel.size).toBe(0);
    });

    it('rejects with the reason of an already aborted signal by handing fetch an aborted signal, as bare fetch would get', async () => {
      const timed = withTimeouts(server.fetch, { totalMs: 1_000, wheel });
      const error = await rejectionOf(timed(URL_A, { signal: AbortSignal.abort('early') }));
      expect(error).toBe('early');
      // fetch itself rejects (and consumes a Request input, as it does without the wrapper).
      expect(server.calls).toHaveLength(1);
      expect(server.last.signal.reason).toBe('early');
      expect(wheel.size).toBe(0);
    });

    it('honours the signal of a Request input', async () => {
      const caller = new AbortController();
      const timed = withTimeouts(server.fetch, { totalMs: 1_000, wheel });
      const pending = timed(new Request(URL_A, { signal: caller.signal }));
      caller.abort('request signal');
      expect(await rejectionOf(pending)).toBe('request signal');
    });

    it('removes its listener after a completed request, a timeout and a network error', async () => {
      const caller = new AbortController();
      const timed = withTimeouts(server.fetch, { headersMs: 50, wheel });
      const ok = timed(URL_A, { signal: caller.signal });
      server.last.respond();
      const res = await ok;
      server.last.end();
      await res.text();
      const timedOut = timed(URL_A, { signal: caller.signal });
      clock.advance(50);
      await rejectionOf(timedOut);
      const failed = timed(URL_A, { signal: caller.signal });
      server.last.fail(new TypeError('fetch failed'));
      expect(await rejectionOf(failed)).toBeInstanceOf(TypeError);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
      expect(wheel.size).toBe(0);
    });
  });

  describe('ambient deadline', () => {
    it('uses the remaining deadline when it is shorter than the configured limits', async () => {
      const timed = withTimeouts(server.fetch, { headersMs: 500, totalMs: 1_000, wheel });
      const state = track(withDeadline(80, () => timed(URL_A), { wheel }));
      clock.advance(79);
      await settle();
      expect(state.settled).toBe(false);
      clock.advance(1);
      await settle();
      expect(state.error).toBeInstanceOf(TimeoutError);
      expect(state.error).toMatchObject({ phase: 'total', timeoutMs: 80 });
    });

    it('keeps the configured limit when it is shorter than the deadline', async () => {
      const timed = withTimeouts(server.fetch, { headersMs: 50, wheel });
      const state = track(withDeadline(1_000, () => timed(URL_A), { wheel }));
      clock.advance(50);
      await settle();
      expect(state.error).toMatchObject({ phase: 'headers', timeoutMs: 50 });
    });

    it('times requests inside a deadline even without options', async () => {
      const timed = withTimeouts(server.fetch, { wheel });
      const state = track(withDeadline(30, () => timed(URL_A), { wheel }));
      clock.advance(30);
      await settle();
      expect(state.error).toMatchObject({ phase: 'total' });
    });

    it('rejects at once without calling fetch when the deadline has passed', async () => {
      const timed = withTimeouts(server.fetch, { totalMs: 1_000, wheel });
      const scope = createDeadline(10, { wheel });
      clock.advance(10);
      const error = await rejectionOf(scope.run(() => timed(URL_A)));
      expect(error).toMatchObject({ name: 'TimeoutError', phase: 'total', timeoutMs: 0 });
      expect(server.calls).toHaveLength(0);
      scope.dispose();
    });

    it('aborts with the parent reason when the deadline is cancelled', async () => {
      const parent = new AbortController();
      const timed = withTimeouts(server.fetch, { totalMs: 1_000, wheel });
      const scope = createDeadline(500, { wheel, signal: parent.signal });
      const pending = scope.run(() => timed(URL_A));
      parent.abort('rpc cancelled');
      expect(await rejectionOf(pending)).toBe('rpc cancelled');
      expect(getEventListeners(scope.signal, 'abort')).toHaveLength(0);
      scope.dispose();
    });
  });

  describe('retry', () => {
    it('retries an idempotent request that timed out on its headers, after the backoff', async () => {
      const onRetry: Array<[string, number]> = [];
      const timed = withTimeouts(server.fetch, {
        headersMs: 50,
        wheel,
        retry: {
          limit: 2,
          backoffMs: 100,
          onRetry: (error, attempt) => onRetry.push([(error as TimeoutError).phase, attempt]),
        },
      });
      const state = track(timed(URL_A));
      clock.advance(50);
      await settle();
      expect(server.calls).toHaveLength(1);
      clock.advance(99);
      await settle();
      expect(server.calls).toHaveLength(1);
      clock.advance(1);
      await settle();
      expect(server.calls).toHaveLength(2);
      expect(server.calls[1].signal).not.toBe(server.calls[0].signal);
      server.last.respondEmpty();
      await settle();
      expect(state.value).toBeInstanceOf(Response);
      expect(onRetry).toEqual([['headers', 1]]);
      expect(wheel.size).toBe(0);
    });

    it('gives up after limit retries with the last TimeoutError, backing off by backoffFactor', async () => {
      const timed = withTimeouts(server.fetch, {
        headersMs: 10,
        wheel,
        retry: { limit: 2, backoffMs: 10, backoffFactor: 3 },
      });
      const state = track(timed(URL_A));
      const starts: number[] = [];
      for (let t = 0; t < 200; t++) {
        if (server.calls.length > starts.length) starts.push(clock.now());
        clock.advance(1);
        await settle();
      }
      expect(starts).toEqual([0, 20, 60]);
      expect(state.error).toMatchObject({ phase: 'headers' });
    });

    it('does not retry POST unless it is listed in methods', async () => {
      const timed = withTimeouts(server.fetch, { headersMs: 10, wheel, retry: { limit: 1, backoffMs: 0 } });
      const post = track(timed(URL_A, { method: 'POST', body: 'x' }));
      clock.advance(10);
      await settle();
      expect(post.error).toBeInstanceOf(TimeoutError);
      expect(server.calls).toHaveLength(1);
      const listed = withTimeouts(server.fetch, {
        headersMs: 10,
        wheel,
        retry: { limit: 1, backoffMs: 0, methods: ['post'] },
      });
      track(listed(URL_A, { method: 'POST', body: 'x' }));
      clock.advance(10);
      await settle();
      expect(server.calls).toHaveLength(3);
    });

    it('does not retry a request whose body is a stream', async () => {
      const timed = withTimeouts(server.fetch, { headersMs: 10, wheel, retry: { limit: 1, backoffMs: 0 } });
      const body = new ReadableStream({ start: (c) => c.close() });
      const state = track(timed(URL_A, { method: 'PUT', body, duplex: 'half' }));
      clock.advance(10);
      await settle();
      expect(state.error).toBeInstanceOf(TimeoutError);
      expect(server.calls).toHaveLength(1);
    });

    it('sends the Request input itself first, as bare fetch does, and a clone of it on each retry', async () => {
      const timed = withTimeouts(server.fetch, { headersMs: 10, wheel, retry: { limit: 1, backoffMs: 0 } });
      const request = new Request(URL_A, { method: 'PUT', body: 'payload' });
      track(timed(request));
      clock.advance(10);
      await settle();
      expect(server.calls).toHaveLength(2);
      expect(server.calls[0].input).toBe(request);
      expect(server.calls[1].input).not.toBe(request);
      expect(await (server.calls[1].input as Request).text()).toBe('payload');
      expect(await request.text()).toBe('payload');
    });

    it('bounds all attempts by budgetMs and reports the budget', async () => {
      const timed = withTimeouts(server.fetch, {
        headersMs: 40,
        wheel,
        retry: { limit: 5, backoffMs: 10, backoffFactor: 1, budgetMs: 100 },
      });
      const state = track(timed(URL_A));
      for (let t = 0; t < 150; t++) {
        clock.advance(1);
        await settle();
      }
      // Attempts at 0 and 50 time out on their headers at 40 and 90; a third would start at
      // 90 + 10 = 100, with nothing left of the budget, so the request gives up at 90.
      expect(server.calls).toHaveLength(2);
      expect(state.error).toMatchObject({ phase: 'headers' });
    });

    it('cuts the last attempt short at the budget with a total TimeoutError', async () => {
      const timed = withTimeouts(server.fetch, {
        headersMs: 40,
        wheel,
        retry: { limit: 5, backoffMs: 5, backoffFactor: 1, budgetMs: 70 },
      });
      const state = track(timed(URL_A));
      for (let t = 0; t < 100; t++) {
        clock.advance(1);
        await settle();
      }
      expect(server.calls).toHaveLength(2);
      expect(state.error).toMatchObject({ phase: 'total', timeoutMs: 70 });
    });

    it('stops retrying when the caller aborts during the backoff', async () => {
      const caller = new AbortController();
      const timed = withTimeouts(server.fetch, { headersMs: 10, wheel, retry: { limit: 3, backoffMs: 100 } });
      const state = track(timed(URL_A, { signal: caller.signal }));
      clock.advance(20);
      await settle();
      caller.abort('bye');
      await settle();
      clock.advance(500);
      await settle();
      expect(state.error).toBe('bye');
      expect(server.calls).toHaveLength(1);
      expect(wheel.size).toBe(0);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    });

    it('does not retry network errors', async () => {
      const timed = withTimeouts(server.fetch, { headersMs: 10, wheel, retry: 3 });
      const pending = timed(URL_A);
      server.last.fail(new TypeError('fetch failed'));
      expect(await rejectionOf(pending)).toBeInstanceOf(TypeError);
      expect(server.calls).toHaveLength(1);
    });
  });
});

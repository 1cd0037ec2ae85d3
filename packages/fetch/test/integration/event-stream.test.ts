import diagnostics from 'node:diagnostics_channel';
import { TimingWheel } from '@tickwheel/core';
import { FETCH_TIMEOUT_CHANNEL, type FetchTimeoutMessage } from '../../src/channels.js';
import { afterEach, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../src/timeout-error.js';
import { withTimeouts } from '../../src/with-timeouts.js';
import { FETCH_ROWS } from '../helpers/fetch-implementations.js';
import { rejectionOf } from '../helpers/scripted-fetch.js';
import { sseEvent, sseHead, useStreamUpstream, type Exchange } from '../helpers/stream-upstream.js';

/*
 * firstEventMs and eventIdleMs against a real server on 127.0.0.1: streams that stall behind
 * keep-alive comments (or blank NDJSON lines) fail in the event limit although bytes keep coming
 * and bodyIdleMs is satisfied; healthy slow streams are not cut; the connection is released.
 * System clock, limits of 100-250 ms, bounds generous for a noisy machine.
 */

/** `events` events `every` ms, then the end (`then=end`) or keep-alive comments every `keepalive` ms. */
function scripted(kind: 'sse' | 'ndjson') {
  return ({ res, url, every, after }: Exchange): void => {
    const count = Number(url.searchParams.get('events') ?? 3);
    const gap = Number(url.searchParams.get('every') ?? 10);
    const end = url.searchParams.get('then') === 'end';
    const keepalive = Number(url.searchParams.get('keepalive') ?? 20);
    if (kind === 'sse') sseHead(res);
    else res.writeHead(200, { 'content-type': 'application/x-ndjson' }).flushHeaders();
    let sent = 0;
    const next = (): void => {
      if (sent === count) {
        if (end) res.end();
        else every(keepalive, () => res.write(kind === 'sse' ? ': keep-alive\n\n' : '\n'));
        return;
      }
      sent++;
      res.write(kind === 'sse' ? sseEvent(JSON.stringify({ n: sent }), undefined, String(sent)) : `{"n":${sent}}\n`);
      after(gap, next);
    };
    if (count === 0) next();
    else after(gap, next);
  };
}

const { upstream, base } = useStreamUpstream({
  '/sse': scripted('sse'),
  '/ndjson': scripted('ndjson'),
  // A JSON body that trickles for 400 ms: no event stream, so the event limits do not apply.
  '/json-trickle': ({ res, every, after }) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('[');
    every(20, () => res.write(' '));
    after(400, () => res.end('1]'));
  },
});

/** Reads the body of `res` to its end, as an SDK does. */
async function drain(res: Response): Promise<string> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body! as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk);
  return text;
}

describe.each(FETCH_ROWS)('event streams through withTimeouts(%s) on 127.0.0.1', (_name, impl) => {
  let wheel: TimingWheel;

  afterEach(() => {
    expect(wheel.size).toBe(0);
    wheel.close();
  });

  it('fails an SSE stream stalled behind keep-alive comments in eventIdleMs, though bodyIdleMs is satisfied, and closes its connection', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(impl.fetch, { bodyIdleMs: 100, eventIdleMs: 200, wheel });
    const closedBefore = upstream().socketsClosed;
    const abandonedBefore = upstream().abandoned;
    const published: FetchTimeoutMessage[] = [];
    const listen = (message: unknown): void => void published.push(message as FetchTimeoutMessage);
    diagnostics.subscribe(FETCH_TIMEOUT_CHANNEL, listen);
    const started = performance.now();
    let error: unknown;
    try {
      const res = await timed(`${base()}/sse?events=3&every=10&keepalive=20`);
      error = await rejectionOf(drain(res));
    } finally {
      diagnostics.unsubscribe(FETCH_TIMEOUT_CHANNEL, listen);
    }
    const elapsed = performance.now() - started;
    expect(published).toMatchObject([{ phase: 'event-idle', limitMs: 200, method: 'GET', error }]);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'event-idle', timeoutMs: 200 });
    expect(elapsed).toBeGreaterThanOrEqual(200);
    expect(elapsed).toBeLessThan(2_000);
    await expect.poll(() => upstream().abandoned).toBe(abandonedBefore + 1);
    await expect.poll(() => upstream().socketsClosed).toBeGreaterThan(closedBefore);
  }, 10_000);

  it('fails a stream that sends only comments in firstEventMs', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(impl.fetch, { firstEventMs: 150, eventIdleMs: 5_000, wheel });
    const res = await timed(`${base()}/sse?events=0&keepalive=20`);
    const error = await rejectionOf(drain(res));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'first-event', timeoutMs: 150 });
    expect((error as Error).message).toContain('(firstEventMs)');
  }, 10_000);

  it('lets a healthy slow stream whose events keep coming run past every event limit, and reuses its connection', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(impl.fetch, { firstEventMs: 250, eventIdleMs: 250, bodyIdleMs: 250, wheel });
    const res = await timed(`${base()}/sse?events=8&every=80&then=end`);
    const text = await drain(res);
    expect(text.match(/^data: /gm)).toHaveLength(8);
    const connections = upstream().connections;
    const again = await timed(`${base()}/sse?events=1&every=5&then=end`);
    expect(await drain(again)).toContain('data: {"n":1}');
    expect(upstream().connections).toBe(connections);
  }, 10_000);

  it('fails an NDJSON stream stalled behind blank lines in eventIdleMs', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(impl.fetch, { bodyIdleMs: 100, eventIdleMs: 200, wheel });
    const res = await timed(`${base()}/ndjson?events=2&every=10&keepalive=20`);
    const error = await rejectionOf(drain(res));
    expect(error).toMatchObject({ name: 'TimeoutError', phase: 'event-idle' });
  }, 10_000);

  it('counts only what isProgress accepts', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(impl.fetch, { eventIdleMs: 200, wheel });
    // Per request: the events after the third are taken for pings.
    const res = await timed(`${base()}/sse?events=30&every=20&then=end`, {
      timeouts: { isProgress: (event) => Number(event.id) <= 3 },
    });
    const error = await rejectionOf(drain(res));
    expect(error).toMatchObject({ name: 'TimeoutError', phase: 'event-idle', timeoutMs: 200 });
  }, 10_000);

  it('does not apply the event limits to a response that is no event stream', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(impl.fetch, { firstEventMs: 100, eventIdleMs: 100, wheel });
    const res = await timed(`${base()}/json-trickle`);
    expect(await res.json()).toEqual([1]);
  }, 10_000);
});

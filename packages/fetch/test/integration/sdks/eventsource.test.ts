import { TimingWheel } from '@tickwheel/core';
import { EventSource } from 'eventsource';
import { afterEach, describe, expect, it } from 'vitest';
import { withTimeouts } from '../../../src/with-timeouts.js';
import { sseEvent, sseHead, useStreamUpstream, type Exchange } from '../../helpers/stream-upstream.js';

/*
 * The eventsource package with `fetch: withTimeouts(fetch, { eventIdleMs })`: an event-idle
 * timeout is a network error to it, so it reconnects after its retry delay with `Last-Event-ID`,
 * as after any other, and the stream goes on where it stopped. The upstream sends events 1 to 3
 * and then only keep-alive comments on a first connection; on a reconnection it sends the two
 * events after the last one the client saw, every 80 ms, then keep-alive comments again.
 */

function events({ req, res, every, after }: Exchange): void {
  const last = Number(req.headers['last-event-id'] ?? 0);
  sseHead(res);
  res.write('retry: 50\n\n');
  const upTo = last === 0 ? 3 : last + 2;
  let id = last;
  const next = (): void => {
    if (id < upTo) {
      id++;
      res.write(sseEvent(`event ${id}`, undefined, String(id)));
      after(last === 0 ? 10 : 80, next);
    } else {
      every(20, () => res.write(': keep-alive\n\n'));
    }
  };
  next();
}

// eventsource 5 declare engines node >= 22, yet run on Node 20 too (checked): the test runs on every Node CI uses.
describe('the eventsource package reconnects through withTimeouts(fetch)', () => {
  const { base, upstream } = useStreamUpstream({ '/events': events });
  let wheel: TimingWheel;

  afterEach(() => {
    expect(wheel.size).toBe(0);
    wheel.close();
  });

  it('reconnects with Last-Event-ID after an event-idle timeout, and a healthy slow stream is not cut', async () => {
    wheel = new TimingWheel();
    const requestsBefore = upstream().requests.length;
    const source = new EventSource(`${base()}/events`, {
      fetch: withTimeouts(fetch, { bodyIdleMs: 100, eventIdleMs: 200, wheel }),
    });
    const ids: string[] = [];
    let errors = 0;
    try {
      await new Promise<void>((resolve) => {
        source.onmessage = (message) => {
          ids.push(message.lastEventId);
          if (message.lastEventId === '5') resolve();
        };
        source.onerror = () => errors++;
      });
    } finally {
      source.close();
    }
    expect(ids).toEqual(['1', '2', '3', '4', '5']);
    expect(errors).toBe(1);
    const requests = upstream().requests.slice(requestsBefore);
    expect(requests.map((request) => request.headers['last-event-id'])).toEqual([undefined, '3']);
    await expect.poll(() => wheel.size).toBe(0);
  }, 10_000);
});

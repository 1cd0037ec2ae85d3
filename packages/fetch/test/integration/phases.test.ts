import { setTimeout as sleep } from 'node:timers/promises';
import { TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../src/timeout-error.js';
import { withTimeouts } from '../../src/with-timeouts.js';
import { FETCH_ROWS } from '../helpers/fetch-implementations.js';
import { rejectionOf } from '../helpers/scripted-fetch.js';
import { useTestServer } from '../helpers/http-server.js';

/*
 * The edges of the body phase as the transport sees them (README "Phases" and "Differences"):
 * bodyIdleMs runs while fetch waits on the server for more of the body, whether or not the caller
 * is reading, and pauses while fetch's buffer is full; totalMs ends when the body has fully
 * arrived, read or not. The first version counted bodyIdleMs only while the caller waited on a
 * read, and totalMs until the caller had read the body; each test says where that differs.
 * System clock, limits of tens of ms, bounds generous for a noisy machine.
 */

/**
 * What a body read that starts after a limit fired rejects with: the TimeoutError, except with
 * undici 6 (Node 20's and 22's fetch, and undici.fetch 6), whose fetch gives such a read its own
 * AbortError, with a timeout's signal as with any (README "Behaviour on failure").
 */
function expectLateReadError(undiciMajor: number, error: unknown, timeout: Partial<TimeoutError>): void {
  if (undiciMajor < 7) {
    expect(error).toMatchObject({ name: 'AbortError', message: 'The operation was aborted.' });
  } else {
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject(timeout);
  }
}

/** More than fetch's buffer and both sockets' can hold, so that fetch must pause the connection. */
const FLOOD_KIB = 32 * 1024;

describe.each(FETCH_ROWS)('phase edges of withTimeouts(%s) on 127.0.0.1', (_name, impl) => {
  const fetchFn = impl.fetch;
  const { base: baseUrl } = useTestServer();
  let wheel: TimingWheel;

  afterEach(() => {
    expect(wheel.size).toBe(0);
    wheel.close();
  });

  it('fires bodyIdleMs while the server stalls even though the caller has not started reading (the first version waited for a read)', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(fetchFn, { bodyIdleMs: 80, totalMs: 5_000, wheel });
    const res = await timed(`${baseUrl()}/trickle?every=5&chunks=2&end=0`);
    await sleep(400);
    // The limit fired and released the request while nobody read: fetch wanted data, none came.
    expect(wheel.size).toBe(0);
    expectLateReadError(impl.undiciMajor, await rejectionOf(res.text()), { phase: 'body', timeoutMs: 80 });
  }, 10_000);

  it('ends totalMs when the body has fully arrived, read or not (the first version ran it until the body was read)', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(fetchFn, { bodyIdleMs: 50, totalMs: 100, wheel });
    const res = await timed(`${baseUrl()}/fast`);
    await expect.poll(() => wheel.size).toBe(0);
    await sleep(250); // past totalMs and bodyIdleMs, the body unread
    expect(await res.text()).toBe('ok');
  }, 10_000);

  it('pauses bodyIdleMs while a caller that is not reading has filled fetch buffer: a slow consumer is not blamed on the server', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(fetchFn, { bodyIdleMs: 250, totalMs: 20_000, wheel });
    const res = await timed(`${baseUrl()}/flood?kib=${FLOOD_KIB}&end=1`);
    await sleep(1_000); // fetch pauses the connection once its buffer is full; nothing arrives meanwhile
    expect(wheel.size).toBe(1);
    expect((await res.arrayBuffer()).byteLength).toBe(FLOOD_KIB * 1024);
  }, 30_000);

  it('still fires totalMs when a caller that is not reading holds the body back', async () => {
    wheel = new TimingWheel();
    // totalMs leaves room for the headers on a loaded machine (150 ms once ran out before them).
    const timed = withTimeouts(fetchFn, { bodyIdleMs: 60, totalMs: 1_000, wheel });
    const res = await timed(`${baseUrl()}/flood?kib=${FLOOD_KIB}&end=1`);
    await sleep(1_500);
    expect(wheel.size).toBe(0);
    expectLateReadError(impl.undiciMajor, await rejectionOf(res.arrayBuffer()), { phase: 'total', timeoutMs: 1_000 });
  }, 20_000);

  it('does not fire bodyIdleMs for a consumer busy between reads while the server keeps sending', async () => {
    wheel = new TimingWheel();
    const timed = withTimeouts(fetchFn, { bodyIdleMs: 300, totalMs: 10_000, wheel });
    const res = await timed(`${baseUrl()}/trickle?every=10&chunks=5&end=1`);
    const reader = res.body!.getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    await sleep(700); // longer than bodyIdleMs, spent by the consumer, not waiting on the server
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toBe('ccccc');
  }, 10_000);
});

import { describe, expect, it } from 'vitest';
import { main } from '../src/main.mjs';

describe('main', () => {
  it('sends keepalives only to the quiet connection, and its watch declares the stalled server dead in bounded time', async () => {
    const lines = [];
    const result = await main({ print: (line) => lines.push(line) });
    const { keepaliveMs, silenceMs } = result.limits;

    // The server sends busy a tick every 100 ms, under keepaliveMs: it never needs a keepalive.
    expect(result.busy.appMessages).toBeGreaterThanOrEqual(10);
    expect(result.busy.keepalives).toBe(0);
    expect(result.busy.dead).toBeUndefined();
    expect(result.busy.open).toBe(true);

    // quiet hears a keepalive about every keepaliveMs for 10 x keepaliveMs, and nothing else.
    expect(result.quiet.appMessages).toBe(0);
    expect(result.quiet.keepalives).toBeGreaterThanOrEqual(6);
    expect(result.stats.dead).toBe(0);
    expect(result.stats.keepalivesSent).toBeGreaterThanOrEqual(result.quiet.keepalives);

    // After the stall: dead once silenceMs passed since its last keepalive, which came at most
    // keepaliveMs before the stall; the socket is closing.
    expect(result.quiet.dead.silentMs).toBeGreaterThanOrEqual(silenceMs);
    expect(result.quiet.afterStallMs).toBeGreaterThanOrEqual(silenceMs - keepaliveMs - 20);
    expect(result.quiet.afterStallMs).toBeLessThan(silenceMs + 1_000);
    expect(result.quiet.dead.readyState).toBe(2);
    expect(result.summary).toMatch(/declared dead \d+ ms after the stall/);
    expect(lines.some((line) => line.startsWith('quiet    declared dead'))).toBe(true);
  });
});

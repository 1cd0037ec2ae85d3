import { describe, expect, it } from 'vitest';
import { main } from '../src/main.mjs';

describe('main', () => {
  it('keeps the healthy client, finds the silent and the frozen ones dead, and drops the killed one at once', async () => {
    const lines = [];
    // Limits a few times the showcase's, so that a loaded CI machine's pause cannot pass for a quiet peer:
    // the healthy client talks every 100 ms, and only a stall past readerIdleMs would make it look idle.
    const result = await main({
      pingIntervalMs: 1_000,
      pongTimeoutMs: 500,
      readerIdleMs: 700,
      print: (line) => lines.push(line),
    });
    const { healthy, silent, frozen, killed } = result.clients;
    const { pingIntervalMs, pongTimeoutMs } = result.limits;
    const slackMs = 500;

    expect(healthy).toMatchObject({ open: true, pingsSent: 0, idle: false, dead: undefined, closedAfterMs: undefined });
    expect(healthy.statusMessages).toBeGreaterThan(0);
    expect(healthy.lastStatus).toMatchObject({ type: 'status', name: 'healthy', pingsSent: 0, awaitingPong: false });

    // silent talked every 100 ms until it stopped: a ping after pingIntervalMs of quiet, then pongTimeoutMs.
    expect(silent.idle).toBe(true);
    expect(silent.dead.waitedMs).toBeGreaterThanOrEqual(pongTimeoutMs);
    expect(silent.closeCode).toBe(1006);
    expect(silent.closedAfterMs).toBeGreaterThanOrEqual(pingIntervalMs);
    expect(silent.closedAfterMs).toBeLessThan(pingIntervalMs + pongTimeoutMs + slackMs);

    expect(frozen.dead.waitedMs).toBeGreaterThanOrEqual(pongTimeoutMs);
    expect(frozen.closeCode).toBe(1006);
    // A ping may have been on its way when the process froze, so only the wait after it is bounded below.
    expect(frozen.closedAfterMs).toBeGreaterThan(0);
    expect(frozen.closedAfterMs).toBeLessThan(pingIntervalMs + pongTimeoutMs + slackMs);

    // The kernel closes a killed process's sockets: no heartbeat needed, no 'dead' event.
    expect(killed.dead).toBeUndefined();
    expect(killed.closeCode).toBe(1006);
    expect(killed.closedAfterMs).toBeLessThan(pingIntervalMs);

    expect(result.stats.dead).toBe(2);
    expect(result.page).toEqual({ status: 200, type: 'text/html; charset=utf-8', connectsToWebSocket: true });
    expect(lines.some((l) => l.includes('frozen   terminated as dead'))).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { main } from '../src/main.mjs';

describe('main', () => {
  it('finishes the healthy slow stream and fails the stuck one in eventIdleMs, not in bodyIdleMs', async () => {
    const lines = [];
    const { results, summary } = await main({ print: (line) => lines.push(line) });
    const by = Object.fromEntries(results.map((r) => [r.name, r]));

    const healthy = by['healthy slow stream'];
    expect(healthy).toMatchObject({ outcome: 'ok', upstreamCut: false });
    expect(healthy.text).toBe('Timing wheels keep one timer per process busy and the rest cheap.');

    const stuck = by['stuck behind keep-alive comments'];
    expect(stuck).toMatchObject({ outcome: 'timeout', phase: 'event-idle', timeoutMs: 400, upstreamCut: true });
    expect(stuck.why).toBe('no progress event for 400 ms (eventIdleMs)');
    expect(stuck.text).toBe('Timing wheels keep');
    // The last token came at about 300 ms; the limit fires 400 ms later, long before bodyIdleMs could (never).
    expect(stuck.elapsedMs).toBeGreaterThanOrEqual(400);
    expect(stuck.elapsedMs).toBeLessThan(1_500);

    const bodyIdleOnly = by['stuck, bodyIdleMs only (capped by totalMs)'];
    expect(bodyIdleOnly).toMatchObject({ outcome: 'timeout', phase: 'total', timeoutMs: 1_500, upstreamCut: true });

    expect(summary).toContain('failed in eventIdleMs');
    expect(lines.some((line) => line.includes("phase 'event-idle'"))).toBe(true);
  });
});

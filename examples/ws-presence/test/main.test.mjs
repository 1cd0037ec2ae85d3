import { describe, expect, it } from 'vitest';
import { main } from '../src/main.mjs';

describe('main', () => {
  it('moves a user between servers without a leave, and lets a killed server’s users leave once each', async () => {
    const lines = [];
    const result = await main({ redisUrl: undefined, print: (line) => lines.push(line) });

    expect(result.redis).toMatch(/^private redis-server on 127\.0\.0\.1:\d+$/);
    expect(result.errors).toEqual([]);
    // One join per user: alice's move to B within the grace is no new join.
    expect(result.joins.map((j) => j.member).sort()).toEqual(['alice', 'bob', 'carol', 'dave']);
    // Only the killed server's users left, once each, announced by the server still alive.
    expect(result.leaves.map((l) => l.member).sort()).toEqual(['bob', 'dave']);
    for (const leave of result.leaves) {
      expect(leave.server).toBe('B');
      // The lease was last renewed up to a third of it before the kill; then the grace.
      expect(leave.afterKillMs).toBeGreaterThanOrEqual((result.nodeTtlMs * 2) / 3 + result.graceMs - 50);
      expect(leave.afterKillMs).toBeLessThan(result.nodeTtlMs + result.graceMs + 1_000 + 2_000); // + load margin
    }
    expect(lines.join('\n')).toContain('no leave for alice');
  });
});

import { describe, expect, it } from 'vitest';
import { main } from '../src/main.mjs';

describe('main', () => {
  it('loses no timer when a worker process is SIGKILLed in the middle of a handler', async () => {
    const lines = [];
    const result = await main({ redisUrl: undefined, print: (line) => lines.push(line) });

    expect(result.redis).toMatch(/^private redis-server on 127\.0\.0\.1:\d+$/);
    expect(result.lost).toEqual([]);
    expect(result.leftInRedis).toEqual([]);
    expect(result.errors).toEqual([]);
    const victim = result.killed.worker;
    expect(['w1', 'w2', 'w3']).toContain(victim);
    expect(result.killed.duringHandlerOf).toMatch(/^job:\d{3}$/);

    // The timer whose handler was cut short was delivered again, by a survivor, after the lease.
    const takeover = result.takenOver.find((t) => t.id === result.killed.duringHandlerOf);
    expect(takeover).toMatchObject({ firstBy: victim, attempts: 1 }); // a stall keeps its attempt
    expect(takeover.by).not.toBe(victim);
    expect(takeover.lateMs).toBeGreaterThanOrEqual(800 - 50);
    for (const t of result.takenOver) expect(t.firstBy).toBe(victim);
    // Only the dead worker's unacked timers were delivered twice.
    expect(result.duplicates.sort()).toEqual(result.takenOver.map((t) => t.id).sort());

    const bySurvivors = ['w1', 'w2', 'w3'].filter((w) => w !== victim).map((w) => result.byWorker[w]);
    expect(bySurvivors[0] + bySurvivors[1]).toBeGreaterThan(0);
    expect(result.byWorker.w1 + result.byWorker.w2 + result.byWorker.w3).toBe(60 + result.takenOver.length);
    expect(lines.join('\n')).toContain('lost: 0 of 60; left in Redis: 0');
  });

  it('reports why it is skipped when there is neither REDIS_URL nor a redis-server binary', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const result = await main({ redisUrl: undefined, print: () => undefined });
      expect(result.skipped).toMatch(/no REDIS_URL and no redis-server binary/);
      expect(result.summary).toBe(`skipped: ${result.skipped}`);
    } finally {
      process.env.PATH = path;
    }
  });
});

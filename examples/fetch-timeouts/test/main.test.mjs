import { describe, expect, it } from 'vitest';
import { main } from '../src/main.mjs';

describe('main', () => {
  it('answers, times out by phase, retries and honours budgets and deadlines as configured', async () => {
    const lines = [];
    const { results, summary } = await main({ print: (line) => lines.push(line) });
    const by = Object.fromEntries(results.map((r) => [r.name, r]));

    expect(by['fast answer']).toMatchObject({ outcome: 'ok', status: 200, requests: 1 });

    expect(by['headers too slow']).toMatchObject({ outcome: 'timeout', phase: 'headers', timeoutMs: 100, requests: 1 });
    expect(by['headers too slow'].why).toMatch(
      /^no response headers within 100 ms \(headersMs\); headersMs of 100 ms: \d+ ms in this call/,
    );

    expect(by['body stalls']).toMatchObject({ outcome: 'timeout', phase: 'body', timeoutMs: 100, requests: 1 });
    expect(by['body stalls'].why).toMatch(
      /^no body data for 100 ms \(bodyIdleMs\); bodyIdleMs of 100 ms: \d+ ms in this call/,
    );

    expect(by['body trickles past the total']).toMatchObject({
      outcome: 'timeout',
      phase: 'total',
      timeoutMs: 300,
      requests: 1,
    });

    expect(by['retried until it answers']).toMatchObject({ outcome: 'ok', status: 200, requests: 3 });
    expect(by['retried until it answers'].retries).toEqual([
      { attempt: 1, phase: 'headers' },
      { attempt: 2, phase: 'headers' },
    ]);

    expect(by['a 503 retried after its Retry-After']).toMatchObject({ outcome: 'ok', status: 200, requests: 2 });
    expect(by['a 503 retried after its Retry-After'].retries).toEqual([{ attempt: 1, status: 503 }]);

    expect(by['POST is not retried']).toMatchObject({ outcome: 'timeout', phase: 'headers', requests: 1, retries: [] });

    // Attempts start at about 0, 110 and 220 ms and the budget ends the third at 275 ms. On a
    // machine so loaded that the second attempt ends after 265 ms, no third attempt fits in the
    // budget and the second one's headers timeout is the answer instead; and on one loaded enough
    // to take the 55 ms the third attempt has left to reach the server, the server sees two.
    const budget = by['retry budget runs out'];
    expect(budget.outcome).toBe('timeout');
    if (budget.phase === 'total') {
      expect(budget).toMatchObject({
        timeoutMs: 275,
        why: expect.stringMatching(
          /^not complete within the retry budget of 275 ms \(retry.budgetMs\) \(attempt \d, after backoffs of [\d, ]+ ms\); retry.budgetMs of 275 ms: \d+ ms in this call/,
        ),
      });
      expect(budget.requests).toBeGreaterThanOrEqual(2);
      expect(budget.requests).toBeLessThanOrEqual(3);
      // Two retries, or one when the first attempt's timeout itself came late.
      expect([
        [{ attempt: 1, phase: 'headers' }],
        [
          { attempt: 1, phase: 'headers' },
          { attempt: 2, phase: 'headers' },
        ],
      ]).toContainEqual(budget.retries);
    } else {
      expect(budget).toMatchObject({ phase: 'headers', timeoutMs: 100 });
      expect(budget.requests).toBeLessThanOrEqual(2);
    }

    expect(by['ambient deadline']).toMatchObject({ outcome: 'timeout', phase: 'total', requests: 1 });
    expect(by['ambient deadline'].why).toMatch(/ambient deadline/);

    // Never early, and not much late, on a noisy machine.
    for (const r of results.filter((x) => x.outcome === 'timeout')) {
      const limit = r.name === 'ambient deadline' ? r.deadlineMs : r.timeoutMs;
      expect(r.elapsedMs).toBeGreaterThanOrEqual(limit - 2);
      expect(r.elapsedMs).toBeLessThan(limit + 500);
    }
    // The budget's phase is 'headers' on a machine loaded as described above.
    expect(summary).toMatch(
      /^9 requests: 3 answered, 6 timed out \(headers, body, total, headers, (total|headers), total\)$/,
    );
    expect(lines).toHaveLength(1 + 2 * 9);
  });
});

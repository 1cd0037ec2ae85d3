/**
 * A real request's timeout says where its time went: the phases of its attempt, and a timer that
 * ran late because this process blocked its own event loop (a busy-wait past the due time, on
 * the real clock), which the message blames instead of the peer.
 */
import { describeBudget, LATE_TIMER_MS } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { TimeoutError } from '../../src/timeout-error.js';
import { withTimeouts } from '../../src/with-timeouts.js';
import { useTestServer } from '../helpers/http-server.js';

const { base } = useTestServer();

/** Blocks the event loop for `ms` of real time. */
function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('TimeoutError.budget', () => {
  it('shows a blocked event loop as lateMs, and the message says so', async () => {
    const timedFetch = withTimeouts(fetch, { headersMs: 100 });
    const pending = timedFetch(`${base()}/slow-headers?ms=5000`).catch((error: unknown) => error);
    // headersMs falls due at 100 ms; the loop is ours again only at 500 ms.
    busyWait(500);
    const error = (await pending) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    const budget = error.budget!;
    expect(budget.limit).toBe('headersMs');
    expect(budget.lateMs).toBeGreaterThanOrEqual(Math.max(LATE_TIMER_MS, 500 - 100 - 50));
    expect(budget.elapsedMs).toBeGreaterThanOrEqual(budget.budgetMs + budget.lateMs - 1);
    expect(error.message.endsWith(`; ${describeBudget(budget)}`)).toBe(true);
    expect(error.message).toMatch(/; the timer ran \d+ ms late: the event loop was blocked$/);
  });

  it('gives the time per phase of the attempt that timed out', async () => {
    const timedFetch = withTimeouts(fetch, { bodyIdleMs: 150 });
    const response = await timedFetch(`${base()}/trickle?every=50&chunks=2&end=0`);
    const error = (await response.text().catch((e: unknown) => e)) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    const budget = error.budget!;
    expect(budget).toMatchObject({ limit: 'bodyIdleMs', inherited: false, budgetMs: 150, attempts: 1, backoffMs: [] });
    expect(budget.phasesMs.body).toBeGreaterThanOrEqual(150);
    expect(budget.phasesMs.upload).toBe(0);
    expect(budget.elapsedMs).toBeGreaterThanOrEqual(budget.phasesMs.headers + budget.phasesMs.body - 1);
  });
});

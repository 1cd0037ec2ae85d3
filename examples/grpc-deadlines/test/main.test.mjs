import { describe, expect, it } from 'vitest';
import { main } from '../src/main.mjs';

/** The ms a hop reported having left when the call reached it. */
function leftAt(call, who, pattern = /with (\d+) ms left/) {
  const entry = call.trace.find((e) => e.who === who && pattern.test(e.text));
  return entry === undefined ? undefined : Number(pattern.exec(entry.text)[1]);
}

describe('main', () => {
  it('propagates the deadline across A, B and the HTTP service, and names the limit that fired', async () => {
    const lines = [];
    const { calls, summary } = await main({ print: (line) => lines.push(line) });
    const [ok, slowTax, capped] = calls;
    const slackMs = 600;

    // 1. In budget: every hop saw the client's 400 ms, less what the hops before it spent.
    expect(ok).toMatchObject({ code: 'OK', reply: { sku: 'apple', priceCents: 500, taxCents: 95, inStock: 15 } });
    const aLeft = leftAt(ok, 'A');
    expect(aLeft).toBeGreaterThan(0);
    expect(aLeft).toBeLessThanOrEqual(400);
    // Each hop prints its budget rounded to whole ms, and grpc-timeout carries whole units rounded up
    // (as grpc-js sends it, so no server ends a call before its client's deadline): a later hop can
    // print up to 1 ms more than the hop before it, never more.
    expect(leftAt(ok, 'B')).toBeLessThanOrEqual(aLeft + 1);
    expect(leftAt(ok, 'tax', /x-request-timeout-ms: (\d+)/)).toBeLessThanOrEqual(aLeft + 1);

    // 2. The tax service is too slow: the client's method limit (or A's copy of it) fires at 400 ms.
    expect(slowTax.code).toBe('DEADLINE_EXCEEDED');
    expect(slowTax.details).toMatch(
      /^Deadline exceeded after (400|39\d) ms \((method|propagated) limit\) on \/shop\.Frontend\/Quote; .+$/,
    );
    expect(slowTax.t).toBeGreaterThanOrEqual(395);
    expect(slowTax.t).toBeLessThan(400 + slackMs);
    expect(slowTax.trace.some((e) => e.who === 'tax' && /request aborted/.test(e.text))).toBe(true);
    expect(slowTax.trace.some((e) => e.who === 'B' && /answers/.test(e.text))).toBe(true);

    // 3. The client allows 2 s, but A caps BatchQuote at 250 ms; B is told to stop.
    expect(capped).toMatchObject({ code: 'DEADLINE_EXCEEDED', limit: 'max', budgetMs: 2_000 });
    // Enforced by server A: grpc-js's exact details text, the facts in the tickwheel-deadline trailer.
    expect(capped.details).toBe('Deadline exceeded');
    expect(capped.trailer).toMatch(/limit=max/);
    expect(capped.trailer).toMatch(/path=\/shop\.Frontend\/BatchQuote/);
    expect(capped.t).toBeGreaterThanOrEqual(245);
    expect(capped.t).toBeLessThan(250 + slackMs);
    expect(leftAt(capped, 'A')).toBeLessThanOrEqual(250);
    expect(leftAt(capped, 'B')).toBeLessThanOrEqual(250);
    expect(capped.trace.some((e) => e.who === 'B' && /stops working: its deadline signal aborted/.test(e.text))).toBe(
      true,
    );

    expect(summary).toMatch(
      /^3 calls: 1 OK, DEADLINE_EXCEEDED after \d+ ms \((method|propagated) limit\), DEADLINE_EXCEEDED after \d+ ms \(max limit\)$/,
    );
    expect(
      lines.some((l) => l.includes('client DEADLINE_EXCEEDED: Deadline exceeded [tickwheel-deadline: limit=max;')),
    ).toBe(true);
  });
});

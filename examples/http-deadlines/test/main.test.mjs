import { describe, expect, it } from 'vitest';
import { main } from '../src/main.mjs';

/** The first number `pattern` captures in the trace of `who`, or undefined. */
function seen(request, who, pattern) {
  const entry = request.trace.find((e) => e.who === who && pattern.test(e.text));
  return entry === undefined ? undefined : Number(pattern.exec(entry.text)[1]);
}

/** The 503 the shop's deadline answers, or the handler's own when a downstream service gave up a moment earlier. */
const TIMED_OUT_BODY = /^Service Unavailable: the request's deadline passed\n$|^\{"error":/;

describe('main', () => {
  it('answers 503 in time, and every downstream hop sees the budget that is left', async () => {
    const lines = [];
    const { requests, summary } = await main({ print: (line) => lines.push(line) });
    const [ok, slowPricing, slowInventory, callerBudget] = requests;
    // Generous on a loaded machine: a deadline is never early, and late by less than this.
    const slackMs = 2_000;

    // 1. In budget: the pricing service got the shop's remaining budget in connect-timeout-ms and
    // took it as its deadline, far under its own 10 s default; the inventory got it in grpc-timeout.
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ sku: 'apple', priceCents: 500, inStock: 15 });
    const shopLeft = seen(ok, 'shop', /with (\d+) ms left/);
    expect(shopLeft).toBeGreaterThan(0);
    expect(shopLeft).toBeLessThanOrEqual(1_500);
    const header = seen(ok, 'pricing', /connect-timeout-ms: (\d+)/);
    expect(header).toBeGreaterThan(0);
    expect(header).toBeLessThanOrEqual(shopLeft);
    const pricingLeft = seen(ok, 'pricing', /its deadline: (\d+) ms left/);
    expect(pricingLeft).toBeGreaterThan(0);
    expect(pricingLeft).toBeLessThanOrEqual(header);
    // grpc-timeout carries whole units rounded up, as grpc-js sends it: at most 1 ms more.
    expect(seen(ok, 'inventory', /with (\d+) ms left/)).toBeLessThanOrEqual(shopLeft + 1);

    // 2. and 3. A slow downstream service: the client gets 503 at the shop's 1.5 s, and the slow
    // service stops working on its own copy of the deadline.
    for (const [request, slow] of [
      [slowPricing, 'pricing'],
      [slowInventory, 'inventory'],
    ]) {
      expect(request.status).toBe(503);
      expect(request.body).toMatch(TIMED_OUT_BODY);
      expect(request.t).toBeGreaterThanOrEqual(1_490);
      expect(request.t).toBeLessThan(1_500 + slackMs);
      expect(
        request.trace.some((e) => e.who === slow && /stops working: its deadline signal aborted/.test(e.text)),
      ).toBe(true);
      expect(request.trace.some((e) => e.who === slow && /answers/.test(e.text))).toBe(false);
    }

    // 4. The caller's connect-timeout-ms: 150 shortens the shop's deadline, and everything below it.
    expect(callerBudget.status).toBe(503);
    expect(callerBudget.body).toMatch(TIMED_OUT_BODY);
    expect(seen(callerBudget, 'shop', /with (\d+) ms left/)).toBeLessThanOrEqual(150);
    expect(seen(callerBudget, 'pricing', /its deadline: (\d+) ms left/)).toBeLessThanOrEqual(150);
    expect(callerBudget.t).toBeGreaterThanOrEqual(140);
    expect(callerBudget.t).toBeLessThan(150 + slackMs);

    expect(summary).toMatch(/^4 requests: 200 after \d+ ms, 503 after \d+ ms, 503 after \d+ ms, 503 after \d+ ms$/);
    expect(lines.some((l) => l.startsWith('- slow pricing service: GET /quote/durian'))).toBe(true);
  });
});

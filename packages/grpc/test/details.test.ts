import { describe, expect, it } from 'vitest';
import { expiredDetails, idleDetails, spentDetails } from '../src/details.js';

// The wording is documented in the README; logs and tests tell the limits apart by it.
describe('details', () => {
  describe('#expiredDetails', () => {
    it('names the budget in whole ms, the limit and the method path', () => {
      expect(expiredDetails('method', 250, '/shop.Cart/Checkout')).toBe(
        'Deadline exceeded after 250 ms (method limit) on /shop.Cart/Checkout',
      );
      expect(expiredDetails('propagated', 99.6, '/a.B/C')).toBe(
        'Deadline exceeded after 100 ms (propagated limit) on /a.B/C',
      );
    });
  });

  describe('#spentDetails', () => {
    it('says the call never started and had 0 ms left', () => {
      expect(spentDetails('explicit', '/a.B/C')).toBe(
        'Deadline exceeded before the call started (explicit limit, 0 ms left) on /a.B/C',
      );
    });
  });

  describe('#idleDetails', () => {
    it('names the idle limit in whole ms, apart from the deadline limits', () => {
      expect(idleDetails(1_000.4, '/a.B/Watch')).toBe(
        'Deadline exceeded: no message for 1000 ms (stream idle limit) on /a.B/Watch',
      );
    });
  });

  it('words every status so that one regular expression finds them all', () => {
    const all = [expiredDetails('default', 5, '/p'), spentDetails('max', '/p'), idleDetails(5, '/p')];
    for (const details of all) expect(details).toMatch(/^Deadline exceeded\b.* on \/p$/);
  });
});

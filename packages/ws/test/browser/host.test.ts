import { afterEach, describe, expect, it, vi } from 'vitest';
import { globalHost } from '../../src/browser/host.js';
import { FakeDocument } from '../helpers/fake-page.js';

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('globalHost', () => {
  it("reads the runtime's monotonic clock", () => {
    const host = globalHost();
    const before = performance.now();
    const now = host.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(performance.now());
  });

  it('sets and clears one-shot timers on the runtime, which never keep Node alive', () => {
    vi.useFakeTimers();
    const host = globalHost();
    const fired: string[] = [];
    const kept = host.setTimer(() => fired.push('kept'), 100);
    const cleared = host.setTimer(() => fired.push('cleared'), 50);
    host.clearTimer(cleared);
    expect((kept as NodeJS.Timeout).hasRef()).toBe(false);
    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['kept']);
  });

  it("has no document in Node, and uses the page's when there is one", () => {
    expect(globalHost().document).toBeUndefined();
    const document = new FakeDocument();
    vi.stubGlobal('document', document);
    expect(globalHost().document).toBe(document);
    vi.stubGlobal('document', { visibilityState: 'visible' }); // no events: not a document it can use
    expect(globalHost().document).toBeUndefined();
  });
});

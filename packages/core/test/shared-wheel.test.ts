import { describe, expect, it } from 'vitest';
import { sharedWheel } from '../src/index.js';

describe('sharedWheel', () => {
  it('returns the same wheel on every call', () => {
    expect(sharedWheel()).toBe(sharedWheel());
  });

  it('is shared through globalThis, so a second copy of the package finds it', () => {
    const key = Symbol.for('@tickwheel/core.sharedWheel@0');
    expect((globalThis as Record<symbol, unknown>)[key]).toBe(sharedWheel());
  });

  it('creates a fresh wheel after the shared one was closed', () => {
    const first = sharedWheel();
    first.close();
    const second = sharedWheel();
    expect(second).not.toBe(first);
    expect(second.isClosed).toBe(false);
  });
});

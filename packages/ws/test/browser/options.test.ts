import { describe, expect, it } from 'vitest';
import { MAX_SILENCE_MS, requireSocket, resolveWatchOptions, WATCH_DEFAULTS } from '../../src/browser/options.js';
import { FakeWhatwgSocket } from '../helpers/fake-page.js';

describe('resolveWatchOptions', () => {
  it('applies the defaults', () => {
    expect(resolveWatchOptions({ silenceMs: 45_000 })).toEqual({ silenceMs: 45_000, ...WATCH_DEFAULTS });
    expect(WATCH_DEFAULTS).toEqual({ keepaliveMessage: '', closeCode: 1000, closeReason: 'server silent' });
  });

  it('keeps what is given', () => {
    const options = { silenceMs: 1.5, keepaliveMessage: 'ka', closeCode: 4999, closeReason: 'gone' };
    expect(resolveWatchOptions(options)).toEqual(options);
    expect(resolveWatchOptions({ silenceMs: MAX_SILENCE_MS, closeCode: 3000 }).closeCode).toBe(3000);
  });

  it.each([
    [undefined, TypeError, '@tickwheel/ws: options must be an object with silenceMs, got undefined'],
    [null, TypeError, '@tickwheel/ws: options must be an object with silenceMs, got null'],
    [45_000, TypeError, '@tickwheel/ws: options must be an object with silenceMs, got 45000'],
    [{}, TypeError, '@tickwheel/ws: silenceMs must be a finite number of ms > 0 and <= 2147483647, got undefined'],
    [{ silenceMs: '5' }, TypeError, 'silenceMs must be a finite number of ms > 0 and <= 2147483647, got "5"'],
    [
      { silenceMs: 0 },
      RangeError,
      '@tickwheel/ws: silenceMs must be a finite number of ms > 0 and <= 2147483647, got 0',
    ],
    [{ silenceMs: -5 }, RangeError, 'got -5'],
    [{ silenceMs: NaN }, RangeError, 'got NaN'],
    [{ silenceMs: Infinity }, RangeError, 'got Infinity'],
    [{ silenceMs: 2 ** 31 }, RangeError, 'got 2147483648'],
    [{ silenceMs: 1, keepaliveMessage: 0 }, TypeError, '@tickwheel/ws: keepaliveMessage must be a string, got 0'],
    [{ silenceMs: 1, closeCode: '1000' }, TypeError, 'closeCode must be 1000 or an integer in 3000-4999'],
    [
      { silenceMs: 1, closeCode: 1001 },
      RangeError,
      '@tickwheel/ws: closeCode must be 1000 or an integer in 3000-4999 (the close codes a page may send), got 1001',
    ],
    [{ silenceMs: 1, closeCode: 3000.5 }, RangeError, 'got 3000.5'],
    [{ silenceMs: 1, closeCode: 5000 }, RangeError, 'got 5000'],
    [{ silenceMs: 1, closeReason: null }, TypeError, '@tickwheel/ws: closeReason must be a string, got null'],
    [
      { silenceMs: 1, closeReason: 'é'.repeat(62) },
      RangeError,
      'closeReason must be at most 123 bytes of UTF-8, got 124 bytes',
    ],
    [
      { silenceMs: 1, pingIntervalMs: 5 },
      TypeError,
      '@tickwheel/ws: unknown option pingIntervalMs; known options: silenceMs, keepaliveMessage, closeCode, closeReason',
    ],
  ])('refuses %j', (options, type, text) => {
    expect(() => resolveWatchOptions(options as never)).toThrow(type);
    expect(() => resolveWatchOptions(options as never)).toThrow(text);
  });
});

describe('requireSocket', () => {
  it('accepts anything with the WHATWG shape', () => {
    expect(() => requireSocket(new FakeWhatwgSocket())).not.toThrow();
  });

  it.each([
    [undefined, 'got undefined'],
    [{}, 'got a plain object'],
    [new Map(), 'got an object (Map)'],
    [{ readyState: 1, addEventListener() {}, removeEventListener() {} }, 'got a plain object'],
  ])('refuses %s, saying what it needs', (socket, got) => {
    expect(() => requireSocket(socket)).toThrow(TypeError);
    expect(() => requireSocket(socket)).toThrow(
      `@tickwheel/ws: socket must be a WHATWG WebSocket (readyState, addEventListener, removeEventListener, close), ${got}`,
    );
  });
});

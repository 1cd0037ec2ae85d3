import { ManualClock, TimingWheel, sharedWheel } from '@tickwheel/core';
import { expectUnknownKey, itRejectsBadValues, type OptionKind } from '../../../tests/helpers/bad-options.js';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, resolveOptions } from '../src/options.js';

describe('resolveOptions', () => {
  it('applies the documented defaults', () => {
    const o = resolveOptions(undefined);
    expect(o).toMatchObject({ ...DEFAULTS, pongTimeoutMs: 10_000, pingSlackMs: 30_000 / 32, trackWrites: false });
    expect(Object.isFrozen(DEFAULTS)).toBe(true);
    expect(o.wheel).toBe(sharedWheel());
  });

  it('defaults pongTimeoutMs to the interval when the interval is shorter than 10 s', () => {
    expect(resolveOptions({ pingIntervalMs: 200 }).pongTimeoutMs).toBe(200);
  });

  it('tracks writes exactly when writer or all idleness needs them, unless asked to', () => {
    expect(resolveOptions({ writerIdleMs: 5 }).trackWrites).toBe(true);
    expect(resolveOptions({ allIdleMs: 5 }).trackWrites).toBe(true);
    expect(resolveOptions({ readerIdleMs: 5 }).trackWrites).toBe(false);
    expect(resolveOptions({ trackWrites: true }).trackWrites).toBe(true);
  });

  it.each([
    [
      'pingIntervalMs',
      -1,
      RangeError,
      '@tickwheel/ws: pingIntervalMs must be a number of ms >= 0 (0 or Infinity: no limit), got -1',
    ],
    [
      'pingIntervalMs',
      '30s',
      TypeError,
      'pingIntervalMs must be a number of ms >= 0 (0 or Infinity: no limit), got "30s"',
    ],
    [
      'readerIdleMs',
      2 ** 60,
      RangeError,
      '@tickwheel/ws: readerIdleMs must be at most 9007199254740992, got 1152921504606847000',
    ],
    ['pongTimeoutMs', -1, RangeError, '@tickwheel/ws: pongTimeoutMs must be a finite number of ms >= 0, got -1'],
  ])('rejects %s = %s', (name, value, type, message) => {
    expect(() => resolveOptions({ [name]: value })).toThrow(type);
    expect(() => resolveOptions({ [name]: value })).toThrow(message);
  });

  describe('the shared table of bad inputs', () => {
    const options: Record<string, OptionKind> = {
      pingIntervalMs: 'limitMs',
      readerIdleMs: 'limitMs',
      writerIdleMs: 'limitMs',
      allIdleMs: 'limitMs',
      keepaliveMs: 'limitMs',
      pongTimeoutMs: 'durationMs',
      pingSlackMs: 'durationMs',
      closeOnIdle: 'boolean',
      trackWrites: 'boolean',
    };
    itRejectsBadValues('@tickwheel/ws', options, (path, value) => resolveOptions({ [path]: value }));

    it('rejects an unknown key', () => {
      expectUnknownKey(() => resolveOptions({ pingInterval: 5 } as never), '@tickwheel/ws', 'pingInterval');
    });

    it('takes 0 and Infinity as "off" for every limit', () => {
      for (const off of [0, Infinity]) {
        const resolved = resolveOptions({ readerIdleMs: 5, writerIdleMs: off, allIdleMs: off, pingIntervalMs: off });
        expect(resolved).toMatchObject({
          pingIntervalMs: Infinity,
          writerIdleMs: Infinity,
          allIdleMs: Infinity,
          pongTimeoutMs: Infinity,
          trackWrites: false,
        });
      }
    });
  });

  it('rejects a pongTimeoutMs of 0', () => {
    expect(() => resolveOptions({ pongTimeoutMs: 0 })).toThrow(
      'pongTimeoutMs must be > 0 and <= pingIntervalMs (30000), got 0',
    );
  });

  it('rejects a pongTimeoutMs longer than the ping interval', () => {
    expect(() => resolveOptions({ pingIntervalMs: 1_000, pongTimeoutMs: 1_001 })).toThrow(RangeError);
    expect(() => resolveOptions({ pingIntervalMs: 1_000, pongTimeoutMs: 1_001 })).toThrow(
      'pongTimeoutMs must be > 0 and <= pingIntervalMs (1000), got 1001',
    );
    expect(resolveOptions({ pingIntervalMs: 1_000, pongTimeoutMs: 1_000 }).pongTimeoutMs).toBe(1_000);
  });

  it('rejects a pingSlackMs longer than the ping interval, or negative', () => {
    expect(() => resolveOptions({ pingIntervalMs: 100, pingSlackMs: 101 })).toThrow(
      'pingSlackMs must be <= pingIntervalMs (100), got 101',
    );
    expect(() => resolveOptions({ pingSlackMs: -1 })).toThrow(
      '@tickwheel/ws: pingSlackMs must be a finite number of ms >= 0, got -1',
    );
    expect(resolveOptions({ pingSlackMs: 0 }).pingSlackMs).toBe(0);
  });

  it('rejects a pingSlackMs when pings are disabled', () => {
    expect(() => resolveOptions({ pingIntervalMs: 0, pingSlackMs: 5, readerIdleMs: 5 })).toThrow(
      /pingSlackMs needs pings/,
    );
  });

  it('rejects a pongTimeoutMs when pings are disabled', () => {
    expect(() => resolveOptions({ pingIntervalMs: 0, pongTimeoutMs: 100, readerIdleMs: 5 })).toThrow(
      /pongTimeoutMs needs pings/,
    );
  });

  it('turns keepalives on with keepaliveMs alone, an empty text frame by default', () => {
    expect(resolveOptions({ keepaliveMs: 20_000 })).toMatchObject({ keepaliveMs: 20_000, keepaliveMessage: '' });
    expect(resolveOptions(undefined)).toMatchObject({ keepaliveMs: Infinity, keepaliveMessage: '' });
    expect(resolveOptions({ pingIntervalMs: 0, keepaliveMs: 5, keepaliveMessage: 'ka' })).toMatchObject({
      pingIntervalMs: Infinity,
      keepaliveMs: 5,
      keepaliveMessage: 'ka',
    });
    expect(resolveOptions({ keepaliveMs: 0 }).keepaliveMs).toBe(Infinity);
  });

  it('rejects a keepaliveMessage that is not a string, or that has no keepaliveMs to go with', () => {
    expect(() => resolveOptions({ keepaliveMs: 5, keepaliveMessage: 7 as never })).toThrow(
      new TypeError('@tickwheel/ws: keepaliveMessage must be a string, got 7'),
    );
    expect(() => resolveOptions({ keepaliveMessage: 'ka' })).toThrow(
      new RangeError('@tickwheel/ws: keepaliveMessage needs keepalives, but keepaliveMs is 0 (off), got "ka"'),
    );
  });

  it('rejects a heartbeat with nothing to do', () => {
    expect(() => resolveOptions({ pingIntervalMs: 0 })).toThrow(/all off: the heartbeat would do nothing/);
  });

  it('rejects trackWrites: false with writer idleness', () => {
    expect(() => resolveOptions({ writerIdleMs: 10, trackWrites: false })).toThrow(/trackWrites cannot be false/);
  });

  it.each([
    ['closeCode', 1006],
    ['closeCode', 1005],
    ['closeCode', 999],
    ['closeCode', 2000],
    ['closeCode', 5000],
    ['closeCode', 1000.5],
    ['idleCloseCode', 1004],
  ])('rejects %s = %s, a code an endpoint may not send', (name, value) => {
    expect(() => resolveOptions({ [name]: value })).toThrow(RangeError);
    expect(() => resolveOptions({ [name]: value })).toThrow(
      `${name} must be a close code an endpoint may send: 1000-1014 except 1004-1006, or 3000-4999, got ${value}`,
    );
  });

  it('accepts application close codes', () => {
    expect(resolveOptions({ closeCode: 4000, idleCloseCode: 3000 })).toMatchObject({
      closeCode: 4000,
      idleCloseCode: 3000,
    });
  });

  it('rejects a close reason longer than a control frame allows', () => {
    expect(() => resolveOptions({ closeReason: 'x'.repeat(124) })).toThrow(
      'closeReason must be at most 123 bytes of UTF-8, got 124 bytes',
    );
    expect(() => resolveOptions({ idleCloseReason: 'é'.repeat(62) })).toThrow(
      'idleCloseReason must be at most 123 bytes of UTF-8, got 124 bytes',
    );
    expect(() => resolveOptions({ closeReason: 42 as never })).toThrow(TypeError);
  });

  it('rejects non-boolean flags', () => {
    expect(() => resolveOptions({ closeOnIdle: 'yes' as never })).toThrow('closeOnIdle must be a boolean, got "yes"');
  });

  it('rejects a wheel that is not a TimingWheel, or is closed', () => {
    expect(() => resolveOptions({ wheel: {} as never })).toThrow(TypeError);
    const wheel = new TimingWheel({ clock: new ManualClock() });
    wheel.close();
    expect(() => resolveOptions({ wheel })).toThrow(
      '@tickwheel/ws: wheel must be an open TimingWheel, got an object (TimingWheel)',
    );
  });

  it('rejects an unknown option, so that typos do not pass silently', () => {
    expect(() => resolveOptions({ pingInterval: 5 } as never)).toThrow(
      /^@tickwheel\/ws: unknown option pingInterval; known options: pingIntervalMs, /,
    );
  });

  it('rejects options that are not an object', () => {
    expect(() => resolveOptions(5 as never)).toThrow('@tickwheel/ws: options must be an object, got 5');
  });

  describe('connection limits', () => {
    it('takes 0 and Infinity as off, and defaults drainTimeoutMs when maxBufferedBytes is on', () => {
      expect(resolveOptions({ firstMessageMs: 0, maxLifetimeMs: Infinity, maxBufferedBytes: 0 })).toMatchObject({
        firstMessageMs: Infinity,
        maxLifetimeMs: Infinity,
        maxBufferedBytes: Infinity,
        drainTimeoutMs: Infinity,
        lifetimeJitter: 0,
      });
      expect(resolveOptions({ maxBufferedBytes: 1 << 20 }).drainTimeoutMs).toBe(10_000);
    });

    it('names the package, the option and the value of a bad one', () => {
      expect(() => resolveOptions({ firstMessageMs: -1 })).toThrow(
        '@tickwheel/ws: firstMessageMs must be a number of ms >= 0 (0 or Infinity: no limit), got -1',
      );
      expect(() => resolveOptions({ maxLifetimeMs: 60_000, lifetimeJitter: 1.5 })).toThrow(
        /^@tickwheel\/ws: lifetimeJitter must be .*got 1\.5$/,
      );
      expect(() => resolveOptions({ lifetimeJitter: 0.1 })).toThrow(
        '@tickwheel/ws: lifetimeJitter needs maxLifetimeMs, which is off, got 0.1',
      );
      expect(() => resolveOptions({ maxBufferedBytes: 1.5 })).toThrow(/maxBufferedBytes must be an integer/);
      expect(() => resolveOptions({ maxBufferedBytes: -1 })).toThrow(RangeError);
      expect(() => resolveOptions({ drainTimeoutMs: 5 })).toThrow(
        '@tickwheel/ws: drainTimeoutMs needs maxBufferedBytes, which is off, got 5',
      );
      expect(() => resolveOptions({ maxBufferedBytes: 1_000, drainTimeoutMs: 0 })).toThrow(RangeError);
      expect(() => resolveOptions({ maxLifetimeMs: '1h' as never })).toThrow(TypeError);
    });

    it('counts as something to do on its own', () => {
      expect(resolveOptions({ pingIntervalMs: 0, firstMessageMs: 5_000 }).firstMessageMs).toBe(5_000);
      expect(() => resolveOptions({ pingIntervalMs: 0 })).toThrow(/would do nothing/);
    });
  });
});

import { ManualClock, TimingWheel, sharedWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { expectUnknownKey, itRejectsBadValues } from '../../../tests/helpers/bad-options.js';
import { EVENT_STREAM_DEFAULTS, streamPlan } from '../src/event-stream-options.js';

const PKG = '@tickwheel/http';

describe('event stream options', () => {
  it('takes the defaults from EVENT_STREAM_DEFAULTS', () => {
    expect(streamPlan(undefined)).toEqual({ ...EVENT_STREAM_DEFAULTS, wheel: sharedWheel() });
    expect(Object.isFrozen(EVENT_STREAM_DEFAULTS)).toBe(true);
  });

  it('reads 0 and Infinity alike as off', () => {
    for (const off of [0, Infinity]) {
      expect(streamPlan({ heartbeatMs: off, maxStreamMs: off, maxBufferedBytes: off })).toMatchObject({
        heartbeatMs: Infinity,
        maxStreamMs: Infinity,
        maxBufferedBytes: Infinity,
        drainTimeoutMs: Infinity,
      });
    }
  });

  it('takes a wheel', () => {
    const wheel = new TimingWheel({ clock: new ManualClock(0) });
    expect(streamPlan({ wheel }).wheel).toBe(wheel);
  });

  itRejectsBadValues(
    PKG,
    {
      heartbeatMs: 'limitMs',
      maxStreamMs: 'limitMs',
      retryMs: 'integer',
      drainTimeoutMs: 'durationMs',
    },
    (path, value) => streamPlan({ [path]: value }),
  );

  it('refuses unknown keys', () => {
    expectUnknownKey(() => streamPlan({ heartbeatIntervalMs: 5 }), PKG, 'heartbeatIntervalMs');
  });

  it.each([
    [{ maxStreamMs: 1000, streamJitter: 1.5 }, RangeError, '@tickwheel/http: streamJitter must be at most 1, got 1.5'],
    [{ maxStreamMs: 1000, streamJitter: '0.1' }, TypeError, '@tickwheel/http: streamJitter must be a finite number'],
    [{ streamJitter: 0.1 }, RangeError, '@tickwheel/http: streamJitter needs maxStreamMs, which is off, got 0.1'],
    [{ maxBufferedBytes: 1.5 }, RangeError, '@tickwheel/http: maxBufferedBytes must be an integer >= 1, got 1.5'],
    [{ maxBufferedBytes: -1 }, RangeError, '@tickwheel/http: maxBufferedBytes must be an integer >= 1, got -1'],
    [{ maxBufferedBytes: '1' }, TypeError, '@tickwheel/http: maxBufferedBytes must be an integer >= 1, got "1"'],
    [{ drainTimeoutMs: 0 }, RangeError, '@tickwheel/http: drainTimeoutMs must be a finite number of ms >= 1, got 0'],
    [
      { maxBufferedBytes: 0, drainTimeoutMs: 5 },
      RangeError,
      '@tickwheel/http: drainTimeoutMs needs maxBufferedBytes, which is off, got 5',
    ],
    [{ retryMs: 2.5 }, RangeError, '@tickwheel/http: retryMs must be an integer >= 0, got 2.5'],
    [{ wheel: {} }, TypeError, '@tickwheel/http: wheel must be a TimingWheel from @tickwheel/core, got {}'],
  ])('rejects %j', (options, type, message) => {
    expect(() => streamPlan(options)).toThrow(type);
    expect(() => streamPlan(options)).toThrow(message);
  });
});

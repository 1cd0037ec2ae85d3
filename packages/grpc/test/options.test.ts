import { TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { expectUnknownKey, itRejectsBadValues } from '../../../tests/helpers/bad-options.js';
import { deadlineInterceptor } from '../src/deadline-interceptor.js';
import { serverDeadlineInterceptor } from '../src/server-deadline-interceptor.js';
import {
  DEFAULTS,
  optionalLimitMs,
  optionalWheel,
  optionsObject,
  parseOverrides,
  serviceKeyOf,
} from '../src/options.js';

describe('options', () => {
  describe('DEFAULTS', () => {
    it('holds every limit of both interceptors, all off, and cannot be changed', () => {
      expect(DEFAULTS).toEqual({
        timeoutMs: Infinity,
        streamIdleMs: Infinity,
        reserveMs: 0,
        minBudgetMs: 0,
        retry: {
          limit: 2,
          perAttemptMs: Infinity,
          statusCodes: ['UNAVAILABLE'],
          backoff: { initialMs: 100, maxMs: 1_000, multiplier: 2, jitter: 0.2 },
        },
        defaultTimeoutMs: Infinity,
        maxTimeoutMs: Infinity,
      });
      expect(Object.isFrozen(DEFAULTS)).toBe(true);
      expect(Object.isFrozen(DEFAULTS.retry.backoff)).toBe(true);
    });
  });

  describe('#parseOverrides', () => {
    it('splits service keys from method keys', () => {
      const { services, methods } = parseOverrides(
        { '/a.b.Svc': 1, '/a.b.Svc/Get': 2, '/Bare': 3, '/_x.Y_1/Z_2': 4 },
        'overrides',
        (v) => v,
      );
      expect([...services]).toEqual([
        ['/a.b.Svc', 1],
        ['/Bare', 3],
      ]);
      expect([...methods]).toEqual([
        ['/a.b.Svc/Get', 2],
        ['/_x.Y_1/Z_2', 4],
      ]);
    });

    it.each(['a.Svc', '/a.Svc/', '/a..Svc', '/a.Svc/Get/More', '/1a.Svc', '', '/'])('rejects the key %j', (key) => {
      expect(() => parseOverrides({ [key]: 1 }, 'overrides', (v) => v)).toThrow(RangeError);
    });
  });

  describe('#serviceKeyOf', () => {
    it('drops the method from a call path', () => {
      expect(serviceKeyOf('/pkg.Service/Method')).toBe('/pkg.Service');
    });
  });

  describe('#optionalLimitMs', () => {
    it('accepts undefined and fractions, and reads 0 and Infinity as no limit', () => {
      expect(optionalLimitMs(undefined, 'x')).toBeUndefined();
      expect(optionalLimitMs(0, 'x')).toBe(Infinity);
      expect(optionalLimitMs(2.5, 'x')).toBe(2.5);
      expect(optionalLimitMs(Infinity, 'x')).toBe(Infinity);
    });

    it('rejects negative values, naming the package', () => {
      expect(() => optionalLimitMs(-0.5, 'streamIdleMs')).toThrow(
        '@tickwheel/grpc: streamIdleMs must be a number of ms >= 0 (0 or Infinity: no limit), got -0.5',
      );
    });
  });

  describe('#optionsObject', () => {
    it('rejects arrays and null', () => {
      expect(() => optionsObject([], 'options')).toThrow('@tickwheel/grpc: options must be an object, got []');
      expect(() => optionsObject(null, 'options')).toThrow('@tickwheel/grpc: options must be an object, got null');
    });
  });

  describe('#optionalWheel', () => {
    it('accepts a TimingWheel', () => {
      const wheel = new TimingWheel();
      expect(optionalWheel(wheel, 'wheel')).toBe(wheel);
      wheel.close();
    });
  });

  describe('the shared table of bad inputs', () => {
    const build = {
      timeoutMs: (v: unknown) => deadlineInterceptor({ timeoutMs: v as number }),
      streamIdleMs: (v: unknown) => deadlineInterceptor({ streamIdleMs: v as number }),
      'overrides["/a.B"].timeoutMs': (v: unknown) =>
        deadlineInterceptor({ overrides: { '/a.B': { timeoutMs: v as number } } }),
      defaultTimeoutMs: (v: unknown) => serverDeadlineInterceptor({ defaultTimeoutMs: v as number }),
      maxTimeoutMs: (v: unknown) => serverDeadlineInterceptor({ maxTimeoutMs: v as number }),
    };
    const limits = Object.fromEntries(Object.keys(build).map((path) => [path, 'limitMs' as const]));
    itRejectsBadValues('@tickwheel/grpc', limits, (path, value) => build[path as keyof typeof build](value));

    it('rejects an unknown key, at the top and in an override', () => {
      expectUnknownKey(() => deadlineInterceptor({ deadlineMs: 5 } as never), '@tickwheel/grpc', 'deadlineMs');
      expectUnknownKey(
        () => serverDeadlineInterceptor({ overrides: { '/a.B': { timeoutMs: 5 } } } as never),
        '@tickwheel/grpc',
        'overrides["/a.B"].timeoutMs',
      );
    });

    it('rejects a wheel that is not one, or is closed', () => {
      expect(() => deadlineInterceptor({ wheel: {} as never })).toThrow(TypeError);
      const wheel = new TimingWheel();
      wheel.close();
      expect(() => serverDeadlineInterceptor({ wheel })).toThrow(
        '@tickwheel/grpc: wheel must be an open TimingWheel, got an object (TimingWheel)',
      );
    });
  });
});

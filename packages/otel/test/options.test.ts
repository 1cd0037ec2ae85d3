import { metrics } from '@opentelemetry/api';
import { ManualClock, sharedWheel, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, resolveOptions } from '../src/options.js';
import type { InstrumentTickwheelOptions } from '../src/types.js';

describe('options', () => {
  describe('resolveOptions', () => {
    it('fills in the defaults: the global meter provider, span events, the shared wheel', () => {
      const resolved = resolveOptions(undefined);
      expect(resolved.meterProvider).toBe(metrics.getMeterProvider());
      expect(resolved.spanEvents).toBe(true);
      expect(resolved.wheels.map(([name, wheel]) => [name, wheel()])).toEqual([['shared', sharedWheel()]]);
      expect(DEFAULTS.spanEvents).toBe(true);
    });

    it('takes wheels as instances or as functions returning one', () => {
      const game = new TimingWheel({ clock: new ManualClock(0) });
      const resolved = resolveOptions({ wheels: { game, lazy: () => game } });
      expect(resolved.wheels.map(([name, wheel]) => [name, wheel()])).toEqual([
        ['game', game],
        ['lazy', game],
      ]);
    });

    it.each<[unknown, string]>([
      [5, '@tickwheel/otel: options must be an object, got 5'],
      [null, '@tickwheel/otel: options must be an object, got null'],
      [
        { meterprovider: {} },
        '@tickwheel/otel: unknown option "meterprovider"; known: meterProvider, spanEvents, wheels',
      ],
      [{ meterProvider: {} }, '@tickwheel/otel: meterProvider must be an object with a getMeter() method, got {}'],
      [
        { meterProvider: 'prom' },
        '@tickwheel/otel: meterProvider must be an object with a getMeter() method, got "prom"',
      ],
      [{ spanEvents: 'yes' }, '@tickwheel/otel: spanEvents must be a boolean, got "yes"'],
      [{ wheels: 3 }, '@tickwheel/otel: wheels must be an object of named TimingWheels, got 3'],
      [
        { wheels: { game: 3 } },
        '@tickwheel/otel: wheels.game must be a TimingWheel or a function returning one, got 3',
      ],
    ])('rejects %j with a TypeError naming the option', (options, message) => {
      expect(() => resolveOptions(options as InstrumentTickwheelOptions)).toThrow(new TypeError(message));
    });
  });
});

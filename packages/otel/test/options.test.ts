import { metrics } from '@opentelemetry/api';
import { ManualClock, sharedWheel, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { expectUnknownKey, itRejectsBadValues, type OptionKind } from '../../../tests/helpers/bad-options.js';
import { DEFAULTS, resolveOptions } from '../src/options.js';
import type { InstrumentTickwheelOptions } from '../src/types.js';

/** Resolves options a caller could only pass by getting around the types. */
const resolveLoose = (options: unknown) => resolveOptions(options as InstrumentTickwheelOptions);

describe('options', () => {
  describe('resolveOptions', () => {
    it('fills in the defaults: the global meter provider, span events, the shared wheel', () => {
      const resolved = resolveOptions(undefined);
      expect(resolved.meterProvider).toBe(metrics.getMeterProvider());
      expect(resolved.spanEvents).toBe(true);
      expect(resolved.wheels.map(([name, wheel]) => [name, wheel()])).toEqual([['shared', sharedWheel()]]);
      expect(DEFAULTS.spanEvents).toBe(true);
      expect(resolveOptions({}).spanEvents).toBe(true);
    });

    it('takes wheels as instances or as functions returning one', () => {
      const game = new TimingWheel({ clock: new ManualClock(0) });
      const resolved = resolveOptions({ wheels: { game, lazy: () => game } });
      expect(resolved.wheels.map(([name, wheel]) => [name, wheel()])).toEqual([
        ['game', game],
        ['lazy', game],
      ]);
      game.close();
    });

    it('takes a wheel from another copy of @tickwheel/core by its brand, not instanceof', () => {
      const brand = Symbol.for('@tickwheel/core.TimingWheel@0');
      const foreign = { [brand]: true, size: 3 } as unknown as TimingWheel;
      const [[, wheel]] = resolveOptions({ wheels: { foreign } }).wheels;
      expect(wheel()).toBe(foreign);
    });

    it.each<[unknown, string]>([
      [5, '@tickwheel/otel: options must be an object, got 5'],
      [null, '@tickwheel/otel: options must be an object, got null'],
      [[], '@tickwheel/otel: options must be an object, got []'],
      [{ meterProvider: {} }, '@tickwheel/otel: meterProvider must be an object with a getMeter() method, got {}'],
      [{ meterProvider: null }, '@tickwheel/otel: meterProvider must be an object with a getMeter() method, got null'],
      [
        { meterProvider: 'prom' },
        '@tickwheel/otel: meterProvider must be an object with a getMeter() method, got "prom"',
      ],
      [{ spanEvents: 'yes' }, '@tickwheel/otel: spanEvents must be a boolean, got "yes"'],
      [{ wheels: 3 }, '@tickwheel/otel: wheels must be an object of named TimingWheels, got 3'],
      [{ wheels: null }, '@tickwheel/otel: wheels must be an object of named TimingWheels, got null'],
      [
        { wheels: { game: 3 } },
        '@tickwheel/otel: wheels.game must be a TimingWheel or a function returning one, got 3',
      ],
    ])('rejects %j with a TypeError naming the option', (options, message) => {
      expect(() => resolveLoose(options)).toThrow(new TypeError(message));
    });

    it('names a bad wheel by its type, never dumping it', () => {
      const big = { timers: new Array(1000).fill(0) };
      expect(() => resolveLoose({ wheels: { big } })).toThrow(
        new TypeError(
          '@tickwheel/otel: wheels.big must be a TimingWheel or a function returning one, got a plain object',
        ),
      );
    });

    describe('the shared table of bad inputs', () => {
      const options: Record<string, OptionKind> = { spanEvents: 'boolean' };
      itRejectsBadValues('@tickwheel/otel', options, (path, value) => resolveLoose({ [path]: value }));

      it('rejects an unknown option, listing the known ones', () => {
        expectUnknownKey(() => resolveLoose({ meterprovider: {} }), '@tickwheel/otel', 'meterprovider');
        expect(() => resolveLoose({ spanevents: false })).toThrow(
          '@tickwheel/otel: unknown option spanevents; known options: meterProvider, spanEvents, wheels',
        );
      });
    });
  });
});

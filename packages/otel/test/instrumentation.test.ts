import diagnosticsChannel from 'node:diagnostics_channel';
import { diag, DiagLogLevel, type DiagLogger, type MeterProvider } from '@opentelemetry/api';
import { CORE_WAKE_CHANNEL, ManualClock, sharedWheel, TimingWheel } from '@tickwheel/core';
import { FETCH_TIMEOUT_CHANNEL } from '@tickwheel/fetch';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createInstruments, METRICS } from '../src/instruments.js';
import { Instrumentation } from '../src/instrumentation.js';
import type { ResolvedOptions } from '../src/options.js';
import { CHANNELS, fetchTimeout, publish } from './helpers/messages.js';
import { Telemetry } from './helpers/telemetry.js';

describe('instrumentation', () => {
  let telemetry: Telemetry;
  const created: Instrumentation[] = [];

  beforeEach(() => {
    telemetry = new Telemetry();
  });

  afterEach(async () => {
    for (const instrumentation of created.splice(0)) instrumentation.disable();
    await telemetry.shutdown();
  });

  /** An instrumentation on the test's meter provider, as instrumentTickwheel() creates one from resolved options. */
  function enable(
    options: { meterProvider?: MeterProvider; wheels?: ResolvedOptions['wheels'] } = {},
  ): Instrumentation {
    const meter = (options.meterProvider ?? telemetry.meterProvider).getMeter('@tickwheel/otel');
    const instrumentation = new Instrumentation(createInstruments(meter), {
      spanEvents: true,
      wheels: options.wheels ?? [['shared', sharedWheel]],
    });
    created.push(instrumentation);
    return instrumentation;
  }

  it('subscribes to every channel while enabled', () => {
    const handle = enable();
    expect(handle.enabled).toBe(true);
    for (const name of CHANNELS) expect(diagnosticsChannel.hasSubscribers(name), name).toBe(true);
  });

  it('observes the pending timers of each wheel by name, calling a wheel function at each collection', async () => {
    const first = new TimingWheel({ clock: new ManualClock(0) });
    const second = new TimingWheel({ clock: new ManualClock(0) });
    let current = first;
    enable({ wheels: [['game', () => current]] });
    first.schedule(10, () => {});
    expect((await telemetry.point(METRICS.wheelPending, { 'tickwheel.wheel': 'game' })).value).toBe(1);
    current = second;
    expect((await telemetry.point(METRICS.wheelPending, { 'tickwheel.wheel': 'game' })).value).toBe(0);
    first.close();
    second.close();
  });

  it('reports a wheel it cannot read to diag and still observes the others', async () => {
    const logged: unknown[][] = [];
    diag.setLogger(
      { error: (...args) => logged.push(args), warn() {}, info() {}, debug() {}, verbose() {} },
      DiagLogLevel.ERROR,
    );
    const game = new TimingWheel({ clock: new ManualClock(0) });
    game.schedule(10, () => {});
    try {
      enable({
        wheels: [
          [
            'gone',
            () => {
              throw new Error('no wheel');
            },
          ],
          ['game', () => game],
        ],
      });
      expect((await telemetry.point(METRICS.wheelPending, { 'tickwheel.wheel': 'game' })).value).toBe(1);
      expect(String(logged[0]?.[0])).toContain('could not read the pending timers of wheel "gone"');
    } finally {
      diag.disable();
      game.close();
    }
  });

  it('hands out disable on its own: it is bound to its instrumentation', () => {
    const { disable } = enable();
    disable();
    expect(diagnosticsChannel.hasSubscribers(FETCH_TIMEOUT_CHANNEL)).toBe(false);
  });

  describe('#disable', () => {
    it('unsubscribes from every channel, and later messages record nothing', async () => {
      const handle = enable();
      for (const name of CHANNELS) expect(diagnosticsChannel.hasSubscribers(name), name).toBe(true);
      publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout());
      handle.disable();
      expect(handle.enabled).toBe(false);
      for (const name of CHANNELS) expect(diagnosticsChannel.hasSubscribers(name), name).toBe(false);
      publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout());
      expect((await telemetry.point(METRICS.timeouts)).value).toBe(1);
      handle.disable();
    });

    it('stops observing the pending gauge', async () => {
      const game = new TimingWheel({ clock: new ManualClock(0) });
      game.schedule(10, () => {});
      const handle = enable({ wheels: [['game', () => game]] });
      expect((await telemetry.point(METRICS.wheelPending)).value).toBe(1);
      handle.disable();
      game.schedule(20, () => {});
      // The SDK keeps exporting the last observation; no new one is made.
      expect((await telemetry.point(METRICS.wheelPending)).value).toBe(1);
      game.close();
    });

    it('is what `using` calls', () => {
      {
        using handle = enable();
        expect(handle.enabled).toBe(true);
        expect(diagnosticsChannel.hasSubscribers(CORE_WAKE_CHANNEL)).toBe(true);
      }
      expect(diagnosticsChannel.hasSubscribers(CORE_WAKE_CHANNEL)).toBe(false);
    });

    it('leaves another instrumentation subscribed', () => {
      const first = enable();
      const second = enable();
      first.disable();
      expect(diagnosticsChannel.hasSubscribers(FETCH_TIMEOUT_CHANNEL)).toBe(true);
      second.disable();
      expect(diagnosticsChannel.hasSubscribers(FETCH_TIMEOUT_CHANNEL)).toBe(false);
    });
  });

  describe('failure behaviour', () => {
    it('never throws into the publisher: a failing recorder is reported to diag', () => {
      const logged: unknown[][] = [];
      const logger: DiagLogger = {
        error: (...args) => logged.push(args),
        warn: () => {},
        info: () => {},
        debug: () => {},
        verbose: () => {},
      };
      diag.setLogger(logger, DiagLogLevel.ERROR);
      const broken = new Error('exporter exploded');
      const meter = telemetry.meterProvider.getMeter('x');
      const throwingAdd = {
        add: () => {
          throw broken;
        },
      };
      // A real meter whose counters throw on add(), as a broken exporter pipeline might.
      const failing = new Proxy(meter, {
        get: (target, key) => (key === 'createCounter' ? () => throwingAdd : Reflect.get(target, key, target)),
      });
      const meterProvider: MeterProvider = { getMeter: () => failing };
      const uncaught = vi.fn();
      process.on('uncaughtException', uncaught);
      try {
        enable({ meterProvider });
        expect(() => publish(FETCH_TIMEOUT_CHANNEL, fetchTimeout())).not.toThrow();
        expect(logged).toHaveLength(1);
        expect(String(logged[0][0])).toContain('tickwheel:fetch:timeout');
        expect(logged[0][1]).toBe(broken);
      } finally {
        process.off('uncaughtException', uncaught);
        diag.disable();
      }
      expect(uncaught).not.toHaveBeenCalled();
    });
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createInstruments, METRICS } from '../src/instruments.js';
import { histogram, Telemetry } from './helpers/telemetry.js';

describe('instruments', () => {
  let telemetry: Telemetry;
  beforeEach(() => {
    telemetry = new Telemetry();
  });
  afterEach(() => telemetry.shutdown());

  describe('createInstruments', () => {
    it('creates every metric under its documented name, with seconds for times and {annotations} for counts', async () => {
      const m = createInstruments(telemetry.meterProvider.getMeter('test'));
      m.timeouts.add(1);
      m.timeoutElapsed.record(1);
      m.fetchRetries.add(1);
      m.grpcHandlerAborts.add(1);
      m.httpEventStreamEnds.add(1);
      m.wheelLateness.record(0);
      m.wheelFired.add(1);
      m.wheelCallbackDuration.record(0);
      m.wheelCallbackErrors.add(1);
      m.wheelPending.addCallback((result) => result.observe(1));
      m.timerSetExpirations.add(1);
      m.redisLateness.record(0);
      m.redisLeasesLost.add(1);
      m.redisDuplicates.add(1);
      const units = Object.fromEntries(
        [...(await telemetry.collect()).values()].map((metric) => [metric.descriptor.name, metric.descriptor.unit]),
      );
      expect(units).toEqual({
        [METRICS.timeouts]: '{timeout}',
        [METRICS.timeoutElapsed]: 's',
        [METRICS.fetchRetries]: '{retry}',
        [METRICS.grpcHandlerAborts]: '{call}',
        [METRICS.httpEventStreamEnds]: '{stream}',
        [METRICS.wheelLateness]: 's',
        [METRICS.wheelFired]: '{timer}',
        [METRICS.wheelCallbackDuration]: 's',
        [METRICS.wheelCallbackErrors]: '{error}',
        [METRICS.wheelPending]: '{timer}',
        [METRICS.timerSetExpirations]: '{expiration}',
        [METRICS.redisLateness]: 's',
        [METRICS.redisLeasesLost]: '{delivery}',
        [METRICS.redisDuplicates]: '{delivery}',
      });
    });

    it('gives the lateness histogram sub-millisecond buckets and the elapsed one buckets up to 5 minutes', async () => {
      const m = createInstruments(telemetry.meterProvider.getMeter('test'));
      m.wheelLateness.record(0.0007);
      m.timeoutElapsed.record(200);
      const lateness = histogram(await telemetry.point(METRICS.wheelLateness));
      expect(lateness.buckets.boundaries.slice(0, 4)).toEqual([0, 0.0005, 0.001, 0.002]);
      expect(lateness.buckets.counts[2]).toBe(1); // (0.0005, 0.001]
      const elapsed = histogram(await telemetry.point(METRICS.timeoutElapsed));
      expect(elapsed.buckets.boundaries.at(-1)).toBe(300);
      expect(elapsed.buckets.counts.at(-2)).toBe(1); // (120, 300]
    });
  });
});

import * as core from '@tickwheel/core';
import * as fetch from '@tickwheel/fetch';
import * as grpc from '@tickwheel/grpc';
import * as http from '@tickwheel/http';
import * as redis from '@tickwheel/redis';
import * as ws from '@tickwheel/ws';
import { describe, expect, it } from 'vitest';
import { createInstruments } from '../src/instruments.js';
import { createRecorders } from '../src/recorders.js';
import { Telemetry } from './helpers/telemetry.js';

/** Every `*_CHANNEL` constant the packages export. */
function exportedChannels(...modules: object[]): string[] {
  return modules.flatMap((module) =>
    Object.entries(module)
      .filter(([key]) => key.endsWith('_CHANNEL'))
      .map(([, value]) => value as string),
  );
}

describe('recorders', () => {
  describe('createRecorders', () => {
    it('has a recorder for exactly the channels the packages export, by their names', async () => {
      const telemetry = new Telemetry();
      const recorders = createRecorders(createInstruments(telemetry.meterProvider.getMeter('test')), true);
      const channels = exportedChannels(core, fetch, grpc, http, ws, redis);
      expect(channels).toHaveLength(16);
      expect([...recorders.keys()].sort()).toEqual(channels.sort());
      for (const name of channels) expect(name).toMatch(/^tickwheel:(core|fetch|grpc|http|ws|redis):[a-z-]+$/);
      expect(
        createRecorders(createInstruments(telemetry.meterProvider.getMeter('test')), false).has(
          core.CORE_CAPTURE_CONTEXT_CHANNEL,
        ),
      ).toBe(false);
      await telemetry.shutdown();
    });
  });
});

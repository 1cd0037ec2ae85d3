import type { AddressInfo } from 'node:net';
import { heartbeat, type HeartbeatOptions } from '@tickwheel/ws';
import { WebSocketServer } from 'ws';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { instrumentTickwheel, METRICS, type TickwheelInstrumentation } from '../../src/index.js';
import { histogram, Telemetry } from './telemetry.js';

/** What a real-server test file shares: the SDK, the bridge on it, and what to clean up after each test. */
export interface InstrumentedSuite {
  readonly telemetry: Telemetry;
  /** Run in reverse order after each test (servers, sockets, clients). */
  readonly cleanups: Array<() => unknown>;
}

/**
 * Registers the hooks of a real-server test file: one Telemetry with `instrumentTickwheel()` on
 * it for the whole file (turned off and shut down after it), and the cleanups after each test.
 */
export function instrumentedSuite(): InstrumentedSuite {
  let telemetry: Telemetry | undefined;
  let instrumentation: TickwheelInstrumentation | undefined;
  const cleanups: Array<() => unknown> = [];
  beforeAll(() => {
    telemetry = new Telemetry();
    instrumentation = instrumentTickwheel({ meterProvider: telemetry.meterProvider });
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    instrumentation?.disable();
    await telemetry?.shutdown();
  });
  return {
    get telemetry() {
      if (telemetry === undefined) throw new Error('instrumentedSuite: telemetry is made in beforeAll');
      return telemetry;
    },
    cleanups,
  };
}

/** A real ws server on 127.0.0.1 with a heartbeat on it, both stopped by `cleanups`. */
export async function heartbeatServer(cleanups: Array<() => unknown>, options: HeartbeatOptions) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  const beat = heartbeat(wss, options);
  cleanups.push(async () => {
    beat.stop();
    for (const socket of wss.clients) socket.terminate();
    await new Promise((resolve) => wss.close(resolve));
  });
  return { wss, beat, url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}` };
}

/** Asserts one heartbeat termination of `phase` on the server side, recorded with `quietMs` (at least `minMs`). */
export async function expectOneWsTimeout(telemetry: Telemetry, phase: string, quietMs: number, minMs: number) {
  const attributes = { 'tickwheel.package': 'ws', 'tickwheel.phase': phase, 'tickwheel.side': 'server' };
  expect((await telemetry.point(METRICS.timeouts, attributes)).value).toBe(1);
  const quiet = histogram(await telemetry.point(METRICS.timeoutElapsed, attributes));
  expect(quiet.count).toBe(1);
  expect(quiet.sum).toBeCloseTo(quietMs / 1000, 9);
  expect(quiet.sum).toBeGreaterThanOrEqual(minMs / 1000);
}

/** A gRPC service of one unary JSON method, `/demo.Slow/Wait`, for servers whose handler never answers. */
export const SLOW_SERVICE = {
  wait: {
    path: '/demo.Slow/Wait',
    requestStream: false,
    responseStream: false,
    requestSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
    requestDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
    responseSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
    responseDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
  },
};

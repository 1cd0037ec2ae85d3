import * as grpc from '@grpc/grpc-js';
import { deadlineInterceptor, serverDeadlineInterceptor } from '@tickwheel/grpc';
import { WebSocket } from 'ws';
import { beforeAll, describe, expect, it } from 'vitest';
import { TIMEOUT_EVENT } from '../../src/index.js';
import { heartbeatServer, instrumentedSuite, SLOW_SERVICE } from '../helpers/real-servers.js';
import type { Telemetry } from '../helpers/telemetry.js';

/**
 * Which spans a timeout's event lands on, with the real SDK (sdk-trace-base, the
 * AsyncLocalStorage context manager) against real grpc-js and ws servers on 127.0.0.1: the
 * caller's span for a gRPC client deadline; none for what has no request span to end (a server
 * deadline, a heartbeat kill), even when an unrelated span is active where the server started.
 */
const suite = instrumentedSuite();
const { cleanups } = suite;
let telemetry: Telemetry;
beforeAll(() => {
  telemetry = suite.telemetry;
});

const SERVICE = SLOW_SERVICE;

/** A real grpc-js server on 127.0.0.1 whose handler never answers, shut down after the test. */
async function mutedGrpcServer(interceptors: grpc.ServerInterceptor[]): Promise<number> {
  const server = new grpc.Server({ interceptors });
  server.addService(SERVICE, { wait: () => {} });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  cleanups.push(() => server.forceShutdown());
  return port;
}

function callWait(client: grpc.Client, options: grpc.CallOptions): Promise<grpc.ServiceError | null> {
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      SERVICE.wait.path,
      SERVICE.wait.requestSerialize,
      SERVICE.wait.responseDeserialize,
      {},
      options,
      (err) => resolve(err),
    ),
  );
}

function eventsOf(spanName: string) {
  const span = telemetry.finishedSpans().find((s) => s.name === spanName);
  if (span === undefined) throw new Error(`no finished span ${spanName}`);
  return span.events;
}

describe('span events with the real SDK, against real servers', () => {
  it(
    "puts a gRPC client deadline on the caller's span, with the limit and the elapsed time",
    { timeout: 15_000 },
    async () => {
      const port = await mutedGrpcServer([]);
      const Client = grpc.makeGenericClientConstructor(SERVICE, 'Slow');
      const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
        interceptors: [deadlineInterceptor({ timeoutMs: 80 })],
      });
      cleanups.push(() => client.close());
      const error = await telemetry.inSpan('place-order', async (span) => {
        const result = await callWait(client, {});
        span.end();
        return result;
      });
      expect(error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);

      const events = eventsOf('place-order');
      expect(events.map((e) => e.name)).toEqual([TIMEOUT_EVENT]);
      const attributes = events[0].attributes!;
      expect(attributes).toMatchObject({
        'tickwheel.package': 'grpc',
        'tickwheel.side': 'client',
        'tickwheel.phase': 'default',
        'tickwheel.propagated': false,
        'rpc.system': 'grpc',
        'rpc.service': 'demo.Slow',
        'rpc.method': 'Wait',
        'tickwheel.limit_ms': 80,
        // Where the time went (the call's TimeoutBudget): its own limit, not an inherited deadline.
        'tickwheel.limit': 'timeoutMs',
        'tickwheel.inherited': false,
        'tickwheel.budget_ms': 80,
        'tickwheel.spent_before_ms': 0,
      });
      expect(attributes['tickwheel.elapsed_ms']).toBeGreaterThanOrEqual(80);
      expect(attributes['tickwheel.elapsed_ms']).toBeLessThan(1_000);
      expect(attributes['tickwheel.late_ms']).toBeGreaterThanOrEqual(0);
      expect(attributes).not.toHaveProperty('tickwheel.source');
    },
  );

  it(
    'adds a server deadline to no span: a span active where the server started is not the call',
    { timeout: 15_000 },
    async () => {
      // The server binds inside a long-lived recording span, so its sockets' async context
      // carries that span; the deadline's event must not land there.
      const { port, startup } = await telemetry.inSpan('startup', async (span) => ({
        port: await mutedGrpcServer([serverDeadlineInterceptor({ maxTimeoutMs: 60 })]),
        startup: span,
      }));
      const Client = grpc.makeGenericClientConstructor(SERVICE, 'Slow');
      const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      cleanups.push(() => client.close());
      expect((await callWait(client, {}))?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      startup.end();
      expect(eventsOf('startup')).toEqual([]);
    },
  );

  it('adds a heartbeat kill to no span, even one active where the server started', { timeout: 15_000 }, async () => {
    const { beat, url, startup } = await telemetry.inSpan('ws-startup', async (span) => ({
      ...(await heartbeatServer(cleanups, { pingIntervalMs: 40, pongTimeoutMs: 40 })),
      startup: span,
    }));
    const dead = new Promise((resolve) => beat.once('dead', resolve));
    const mute = new WebSocket(url, { autoPong: false });
    cleanups.push(() => mute.terminate());
    await dead;
    startup.end();
    expect(eventsOf('ws-startup')).toEqual([]);
  });
});

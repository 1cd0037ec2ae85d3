import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { deadlineInterceptor } from '../../src/deadline-interceptor.js';
import { serverDeadlineInterceptor } from '../../src/server-deadline-interceptor.js';
import {
  collect,
  echoImplementation,
  newLog,
  unary,
  type EchoClient,
  type EchoReply,
  type EchoRequest,
} from '../helpers/echo.js';
import { loopbackPerTest } from '../helpers/loopback.js';

// Tests adapted from grpc-node's own suite (github:grpc/grpc-node, packages/grpc-js/test:
// test-server-deadlines.ts, test-call-propagation.ts, test-metadata.ts), run twice: with bare
// grpc-js, and with deadlineInterceptor({ timeoutMs: 600_000 }) on every client and
// serverDeadlineInterceptor() first on every server. What the caller and the handler observe must
// match, details text included. Each title names the test it comes from.

interface Side {
  client: grpc.Interceptor[];
  server: grpc.ServerInterceptor[];
}
const BARE: Side = { client: [], server: [] };
// A client limit far too long to fire: it puts every call on the wheel and writes grpc-timeout.
// The newer options set too, each too small or too long to change an outcome here: a 1 ms reserve,
// a 1 ms minimum budget, and retries on a code no scenario answers with.
const WRAPPED: Side = {
  client: [
    deadlineInterceptor({
      timeoutMs: 600_000,
      reserveMs: 1,
      minBudgetMs: 1,
      retry: { limit: 2, perAttemptMs: 600_000, statusCodes: ['RESOURCE_EXHAUSTED'] },
    }),
  ],
  server: [serverDeadlineInterceptor()],
};

const loopback = loopbackPerTest();

async function serve(side: Side, implementation: grpc.UntypedServiceImplementation): Promise<EchoClient> {
  const server = await loopback.server(side.server, implementation);
  return loopback.client(server.address, side.client);
}

/** Runs `scenario` on both sides; returns what each observed. */
async function differential<T>(scenario: (side: Side) => Promise<T>): Promise<{ bare: T; wrapped: T }> {
  const bare = await scenario(BARE);
  const wrapped = await scenario(WRAPPED);
  return { bare, wrapped };
}

function outcome(err: grpc.ServiceError | null): { code: number; details: string } {
  return err === null ? { code: grpc.status.OK, details: '' } : { code: err.code, details: err.details };
}

describe('differential: bare grpc-js vs our interceptors', () => {
  it('ends a call whose grpc-timeout header the caller set by hand (source: grpc-js test-server-deadlines.ts, "Server deadlines works with deadlines")', async () => {
    const { bare, wrapped } = await differential(async (side) => {
      const client = await serve(side, echoImplementation(newLog()));
      const metadata = new grpc.Metadata();
      metadata.set('grpc-timeout', '100m');
      const { err, ms } = await unary(client, { text: 'slow', delayMs: 2_000 }, {}, metadata);
      return { ...outcome(err), ms };
    });
    expect(bare.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(bare.details).toBe('Deadline exceeded');
    // The caller's 100 ms is shorter than the client's 600 s: it goes out as written, and the
    // server answers with grpc-js's own text.
    expect(wrapped.code).toBe(bare.code);
    expect(wrapped.details).toBe(bare.details);
    expect(wrapped.ms).toBeGreaterThanOrEqual(95);
    expect(wrapped.ms).toBeLessThan(1_500);
  });

  it('rejects an invalid grpc-timeout header with INTERNAL (source: grpc-js test-server-deadlines.ts, "Server deadlines rejects invalid deadline")', async () => {
    const { bare, wrapped } = await differential(async (side) => {
      const log = newLog();
      const client = await serve(side, echoImplementation(log));
      const metadata = new grpc.Metadata();
      metadata.set('grpc-timeout', 'Infinity');
      const { err } = await unary(client, { text: 'x', delayMs: 0 }, {}, metadata);
      return { ...outcome(err), started: log.started.length };
    });
    expect(bare.code).toBe(grpc.status.INTERNAL);
    expect(bare.details).toMatch(/^Invalid grpc-timeout value/);
    expect(wrapped).toEqual(bare);
  });

  it('tells the handler and the caller of a client cancel (source: grpc-js test-server-deadlines.ts, "Cancellation handles requests cancelled by the client")', async () => {
    const { bare, wrapped } = await differential(async (side) => {
      let inHandler = false;
      let cancelledInServer = false;
      const client = await serve(side, {
        ServerStream(stream: grpc.ServerWritableStream<EchoRequest, EchoReply>) {
          inHandler = true;
          stream.on('cancelled', () => {
            stream.write({ text: 'late', remainingMs: 0 });
            stream.end();
            cancelledInServer = true;
          });
        },
      });
      const call = client.ServerStream({ text: 'x' });
      const result = collect(call);
      while (!inHandler) await new Promise((resolve) => setImmediate(resolve));
      call.cancel();
      const { messages, err } = await result;
      while (!cancelledInServer) await new Promise((resolve) => setImmediate(resolve));
      return { ...outcome(err), messages: messages.length, cancelledInServer };
    });
    expect(bare).toEqual({
      code: grpc.status.CANCELLED,
      details: 'Cancelled on client',
      messages: 0,
      cancelledInServer: true,
    });
    expect(wrapped).toEqual(bare);
  });

  it('cancels the call a handler made with { parent } when its own caller cancels (source: grpc-js test-call-propagation.ts, "Call propagation Cancellation should work with unary requests")', async () => {
    const { bare, wrapped } = await differential(async (side) => {
      const backend = await serve(side, { Unary: () => {} });
      let call: grpc.ClientUnaryCall | undefined;
      let inner: Promise<{ code: number; details: string }> | undefined;
      const proxy = await serve(side, {
        Unary(parent: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
          inner = new Promise((resolve) => {
            backend.Unary(parent.request, { parent }, (err) => {
              callback(err, undefined);
              resolve(outcome(err));
            });
          });
          call!.cancel();
        },
      });
      const outer = new Promise<{ code: number; details: string }>((resolve) => {
        call = proxy.Unary({ text: 'x' }, {}, (err) => resolve(outcome(err)));
      });
      const outerOutcome = await outer;
      while (inner === undefined) await new Promise((resolve) => setImmediate(resolve));
      return { outer: outerOutcome.code, inner: (await inner).code };
    });
    expect(bare).toEqual({ outer: grpc.status.CANCELLED, inner: grpc.status.CANCELLED });
    expect(wrapped).toEqual(bare);
  });

  it('propagates the caller’s deadline through { parent, propagate_flags: DEADLINE } (source: grpc-js test-call-propagation.ts, "Call propagation Deadlines should work with unary requests")', async () => {
    const { bare, wrapped } = await differential(async (side) => {
      const backend = await serve(side, { Unary: () => {} });
      let inner: Promise<number> | undefined;
      const proxy = await serve(side, {
        Unary(parent: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
          inner = new Promise((resolve) => {
            backend.Unary(parent.request, { parent, propagate_flags: grpc.propagate.DEADLINE }, (err) => {
              callback(err, undefined);
              resolve(outcome(err).code);
            });
          });
        },
      });
      const started = performance.now();
      const outer = await new Promise<number>((resolve) => {
        proxy.Unary({ text: 'x' }, { deadline: Date.now() + 100 }, (err) => resolve(outcome(err).code));
      });
      const ms = performance.now() - started;
      // The inner call ends on the same instant as the outer one: on its own deadline, or on the
      // cancel that the outer call's end propagates when that reaches the proxy first (a race on
      // a loaded machine, in grpc-js alone as with us). Either way it ends with the budget.
      const innerCode = await inner!;
      const innerEnded = ([grpc.status.DEADLINE_EXCEEDED, grpc.status.CANCELLED] as number[]).includes(innerCode);
      return { outer, innerEnded, inTime: ms >= 95 && ms < 1_500 };
    });
    expect(bare).toEqual({ outer: grpc.status.DEADLINE_EXCEEDED, innerEnded: true, inTime: true });
    expect(wrapped).toEqual(bare);
  });

  it('carries request metadata to the handler and response metadata and trailers back, untouched (source: grpc-js test-metadata.ts, "Metadata" round trips, over the wire)', async () => {
    const { bare, wrapped } = await differential(async (side) => {
      let seen: Record<string, unknown> = {};
      const client = await serve(side, {
        Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
          const map = call.metadata.getMap();
          delete map['user-agent'];
          seen = map;
          const header = new grpc.Metadata();
          header.set('x-header', 'h');
          call.sendMetadata(header);
          const trailer = new grpc.Metadata();
          trailer.set('x-trailer-bin', Buffer.from([1, 2, 3]));
          callback(null, { text: call.request.text, remainingMs: 0 }, trailer);
        },
      });
      const metadata = new grpc.Metadata();
      metadata.set('x-text', 'hello');
      metadata.add('x-multi', 'a');
      metadata.add('x-multi', 'b');
      metadata.set('x-data-bin', Buffer.from([9, 8]));
      const headers: Array<Record<string, unknown>> = [];
      const trailers: Array<Record<string, unknown>> = [];
      const { err, res } = await new Promise<{ err: grpc.ServiceError | null; res?: EchoReply }>((resolve) => {
        const call = client.Unary({ text: 'md' }, metadata, { deadline: Date.now() + 10_000 }, (e, r) =>
          resolve({ err: e, res: r }),
        );
        call.on('metadata', (m: grpc.Metadata) => {
          const map = m.getMap();
          // HTTP/2's own date header (Node 26 sends one) names the second the answer left: two calls
          // straddle a second now and then. Its presence is compared, not its value.
          if (typeof map.date === 'string') map.date = '<a date>';
          headers.push(map);
        });
        call.on('status', (s: grpc.StatusObject) => trailers.push(s.metadata.getMap()));
      });
      return { ...outcome(err), text: res?.text, seen, headers, trailers, callerMetadata: metadata.getMap() };
    });
    expect(bare.seen).toEqual({ 'x-text': 'hello', 'x-multi': 'a, b', 'x-data-bin': Buffer.from([9, 8]) });
    expect(bare.headers[0]).toMatchObject({ 'x-header': 'h' });
    expect(bare.trailers[0]).toMatchObject({ 'x-trailer-bin': Buffer.from([1, 2, 3]) });
    expect(wrapped).toEqual(bare);
  });
});

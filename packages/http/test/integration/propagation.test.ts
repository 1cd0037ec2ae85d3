// The request's deadline flows into the calls its handler makes: a withTimeouts fetch and a deadlineInterceptor gRPC call get what is left.
import http from 'node:http';
import {
  Client,
  Server,
  ServerCredentials,
  credentials,
  type ServerUnaryCall,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { currentDeadline } from '@tickwheel/core';
import { withTimeouts } from '@tickwheel/fetch';
import { deadlineInterceptor } from '@tickwheel/grpc';
import { afterEach, describe, expect, it } from 'vitest';
import { serverTimeouts } from '../../src/index.js';
import { get, loopback } from '../helpers/loopback.js';

const net = loopback();
const same = (value: Buffer): Buffer => value;

/** A gRPC server whose one method answers with the ms left of the deadline its client sent. */
async function grpcBudgetServer(): Promise<{ address: string; server: Server }> {
  const server = new Server();
  server.addService(
    {
      Budget: {
        path: '/test.Budget/Left',
        requestStream: false,
        responseStream: false,
        requestSerialize: same,
        requestDeserialize: same,
        responseSerialize: same,
        responseDeserialize: same,
      },
    },
    {
      Budget: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
        const deadline = call.getDeadline();
        const left = deadline instanceof Date ? deadline.getTime() - Date.now() : Number(deadline) - Date.now();
        callback(null, Buffer.from(String(Number.isFinite(left) ? Math.round(left) : 'none')));
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return { address: `127.0.0.1:${port}`, server };
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('the request deadline inside the handler', () => {
  it('reaches a deadlineInterceptor gRPC call and a withTimeouts fetch, which the deadline aborts', async () => {
    const grpc = await grpcBudgetServer();
    cleanups.push(() => grpc.server.forceShutdown());
    const client = new Client(grpc.address, credentials.createInsecure(), { interceptors: [deadlineInterceptor()] });
    cleanups.push(() => client.close());
    // The downstream HTTP service never answers; it sees its request aborted.
    let downstreamAborted!: Promise<void>;
    const downstream = http.createServer((req) => {
      downstreamAborted = new Promise((resolve) => req.socket.once('close', () => resolve()));
    });
    const downstreamPort = await net.listen(downstream);
    const timedFetch = withTimeouts(fetch, { totalMs: 60_000 });

    const seen: { grpcLeft?: number; fetchError?: string; fetchAfterMs?: number; budgetMs?: number } = {};
    let handlerDone!: Promise<void>;
    const server = http.createServer((_req, res) => {
      const started = Date.now();
      seen.budgetMs = currentDeadline()?.remaining();
      handlerDone = (async () => {
        const left = await new Promise<string>((resolve, reject) =>
          client.makeUnaryRequest('/test.Budget/Left', same, same, Buffer.from(''), (error, value) =>
            error ? reject(error) : resolve(String(value)),
          ),
        );
        seen.grpcLeft = Number(left);
        try {
          await timedFetch(`http://127.0.0.1:${downstreamPort}/slow`);
        } catch (error) {
          seen.fetchError = (error as Error).name;
          seen.fetchAfterMs = Date.now() - started;
        }
        res.end('too late'); // dropped: the 503 went out at the deadline
      })();
    });
    serverTimeouts(server, { defaultTimeoutMs: 1_500 });
    const port = await net.listen(server);
    const caller = await net.connect(port);
    caller.write(get('/work'));
    const answer = await caller.whenClosed();
    await handlerDone;
    await downstreamAborted;

    expect(answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(answer).not.toContain('too late');
    expect(seen.budgetMs).toBeLessThanOrEqual(1_500);
    expect(seen.budgetMs).toBeGreaterThan(1_000);
    // What the gRPC server was told is left: at most the request's budget, and some of it.
    expect(seen.grpcLeft).toBeGreaterThan(0);
    expect(seen.grpcLeft).toBeLessThanOrEqual(1_500);
    // The fetch ended at the request's deadline, not at its own 60 s.
    expect(seen.fetchError).toBe('TimeoutError');
    expect(seen.fetchAfterMs).toBeGreaterThanOrEqual(1_000);
    expect(seen.fetchAfterMs).toBeLessThan(15_000);
  }, 30_000);

  it("shortens both by the caller's own deadline header", async () => {
    const grpc = await grpcBudgetServer();
    cleanups.push(() => grpc.server.forceShutdown());
    const client = new Client(grpc.address, credentials.createInsecure(), { interceptors: [deadlineInterceptor()] });
    cleanups.push(() => client.close());
    const server = http.createServer((_req, res) => {
      client.makeUnaryRequest('/test.Budget/Left', same, same, Buffer.from(''), (error, value) =>
        res.end(error ? `error ${error.code}` : `left=${String(value)}`),
      );
    });
    serverTimeouts(server, { defaultTimeoutMs: 60_000 });
    const port = await net.listen(server);
    const caller = await net.connect(port);
    caller.write(get('/work', { 'grpc-timeout': '5S' }));
    const got = await caller.waitFor(/left=\d+$/);
    const left = Number(/left=(\d+)$/.exec(got)![1]);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(5_000);
  });
});

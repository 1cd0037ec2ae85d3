import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { deadlineInterceptor } from '../../src/deadline-interceptor.js';
import { MAX_GRPC_TIMEOUT_MS } from '../../src/grpc-timeout.js';
import { serverDeadlineInterceptor } from '../../src/server-deadline-interceptor.js';
import { PYTHON } from '../global-setup.js';
import {
  echoClient,
  echoImplementation,
  EchoService,
  newLog,
  packageDefinition,
  ready,
  startServer,
  unary,
  type EchoReply,
  type EchoRequest,
  type HandlerLog,
  type Running,
} from '../helpers/echo.js';

// Budgets past 2^31 - 1 ms (about 24.8 days), on real grpc-js servers and clients and with
// Python's grpcio (gRPC's C core) as a client. Bare grpc-js reads grpc-timeout as 32-bit
// milliseconds: such a call fails at once, or its deadline shrinks. With our interceptors it
// must neither fail at once nor shrink.

const DAY_MS = 86_400_000;
const THIRTY_DAYS_MS = 30 * DAY_MS;
const TRILLION_MS = 1e12;
const UNARY = '/tickwheel.test.Echo/Unary';
const SCRIPT = path.join(__dirname, '..', 'fixtures', 'python_client.py');
const run = promisify(execFile);
const unaryDefinition = (
  packageDefinition['tickwheel.test.Echo'] as Record<
    string,
    { requestSerialize(v: EchoRequest): Buffer; responseDeserialize(b: Buffer): EchoReply }
  >
).Unary;

const running: Running[] = [];
const clients: grpc.Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const server of running.splice(0)) await server.close();
});

async function serve(interceptors: grpc.ServerInterceptor[]): Promise<{ log: HandlerLog; address: string }> {
  const log = newLog();
  const server = await startServer([[EchoService.service, echoImplementation(log)]], { interceptors });
  running.push(server);
  return { log, address: server.address };
}

async function client(address: string, interceptors: grpc.Interceptor[]) {
  const c = echoClient(address, interceptors);
  clients.push(c);
  await ready(c);
  return c;
}

describe('long deadlines', () => {
  for (const [name, budgetMs] of [
    ['30 days', THIRTY_DAYS_MS],
    ['1e12 ms', TRILLION_MS],
  ] as const) {
    it(`carries a ${name} timeoutMs to a grpc-js server with serverDeadlineInterceptor, unshrunk`, async () => {
      const { log, address } = await serve([serverDeadlineInterceptor()]);
      const c = await client(address, [deadlineInterceptor({ timeoutMs: budgetMs })]);
      const { err, res } = await unary(c, { text: 'long', delayMs: 0 });
      expect(err).toBeNull();
      expect(res!.remainingMs).toBeGreaterThan(budgetMs - 5_000);
      expect(res!.remainingMs).toBeLessThanOrEqual(budgetMs + 60_000);
      expect(log.started).toEqual(['Unary']);
    });

    it(`answers a ${name} explicit deadline through a bare grpc-js server instead of failing at once`, async () => {
      const { address } = await serve([]);
      const c = await client(address, [deadlineInterceptor()]);
      const { err, res } = await unary(c, { text: 'long', delayMs: 20 }, { deadline: Date.now() + budgetMs });
      expect(err).toBeNull();
      expect(res!.text).toBe('long');
    });
  }

  it('shows the grpc-js failure it works around: a bare 30-day deadline fails at once', async () => {
    const { address } = await serve([]);
    const c = await client(address, []);
    const { err, ms } = await unary(c, { text: 'long', delayMs: 20 }, { deadline: Date.now() + THIRTY_DAYS_MS });
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(ms).toBeLessThan(1_000);
  });

  it('sends the largest grpc-timeout budget exactly to a server that reads it, and one ms more out of band', async () => {
    const { log, address } = await serve([serverDeadlineInterceptor()]);
    const c = await client(address, [deadlineInterceptor()]);
    for (const budgetMs of [MAX_GRPC_TIMEOUT_MS, MAX_GRPC_TIMEOUT_MS + 1]) {
      const { err } = await unary(c, { text: 'edge', delayMs: 0 }, { deadline: Date.now() + budgetMs });
      expect(err).toBeNull();
    }
    expect(log.remaining[0]).toBeGreaterThan(MAX_GRPC_TIMEOUT_MS - 5_000);
    expect(log.remaining[1]).toBeGreaterThan(MAX_GRPC_TIMEOUT_MS - 5_000);
  });

  it('hands the handler metadata without the out-of-band header', async () => {
    let seen: grpc.Metadata | undefined;
    const server = await startServer(
      [
        [
          EchoService.service,
          {
            Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, cb: grpc.sendUnaryData<EchoReply>) {
              seen = call.metadata;
              cb(null, { text: 'ok', remainingMs: 0 });
            },
          },
        ],
      ],
      { interceptors: [serverDeadlineInterceptor()] },
    );
    running.push(server);
    const c = await client(server.address, [deadlineInterceptor({ timeoutMs: THIRTY_DAYS_MS })]);
    const metadata = new grpc.Metadata();
    metadata.set('x-user', 'kept');
    const { err } = await unary(c, { text: 'm' }, {}, metadata);
    expect(err).toBeNull();
    expect(seen!.get('tickwheel-timeout')).toEqual([]);
    expect(seen!.get('x-user')).toEqual(['kept']);
    // The caller's own Metadata is not touched either.
    expect(metadata.getMap()).toEqual({ 'x-user': 'kept' });
  });

  describe('from the Python grpcio client', () => {
    async function pythonCall(address: string, timeoutSeconds: number) {
      const hex = unaryDefinition.requestSerialize({ text: 'py', delayMs: 20 }).toString('hex');
      const { stdout } = await run(PYTHON, [SCRIPT, address, UNARY, hex, String(timeoutSeconds)], { timeout: 30_000 });
      return JSON.parse(stdout) as { code: string; details: string; response: string | null };
    }

    for (const [name, budgetMs] of [
      ['30 days', THIRTY_DAYS_MS],
      ['1e12 ms', TRILLION_MS],
    ] as const) {
      it(`answers a ${name} budget that grpc-js alone would fail at once`, async () => {
        // gRPC's C core sends these as 43300M and 27000H: past 2^31 - 1 ms, which grpc-js reads as negative.
        const { log, address } = await serve([serverDeadlineInterceptor({ maxTimeoutMs: 40 * DAY_MS })]);
        const outcome = await pythonCall(address, budgetMs / 1_000);
        expect(outcome.code).toBe('OK');
        expect(log.started).toEqual(['Unary']);
        // grpc-js has lost the client's figure; the server's cap is the deadline the handler sees.
        const reply = unaryDefinition.responseDeserialize(Buffer.from(outcome.response!, 'hex'));
        expect(reply.remainingMs).toBeGreaterThan(40 * DAY_MS - 5_000);
        expect(reply.remainingMs).toBeLessThanOrEqual(40 * DAY_MS);
      }, 30_000);

      it(`shows the grpc-js failure for a ${name} Python budget without the interceptor`, async () => {
        const { address } = await serve([]);
        const outcome = await pythonCall(address, budgetMs / 1_000);
        expect(outcome.code).toBe('DEADLINE_EXCEEDED');
      }, 30_000);
    }
  });
});

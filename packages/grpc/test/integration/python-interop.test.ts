import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { serverDeadlineInterceptor } from '../../src/server-deadline-interceptor.js';
import type { ServerDeadlineInterceptorOptions } from '../../src/types.js';
import { PYTHON } from '../global-setup.js';
import {
  echoImplementation,
  EchoService,
  newLog,
  packageDefinition,
  startServer,
  type EchoReply,
  type EchoRequest,
  type HandlerLog,
  type Running,
} from '../helpers/echo.js';

// A client that is not grpc-js: Debian's python3-grpcio (gRPC's C core) calls our server with a
// deadline of its own, sent as grpc-timeout, and we check the DEADLINE_EXCEEDED it receives.

const run = promisify(execFile);
const SCRIPT = path.join(__dirname, '..', 'fixtures', 'python_client.py');
const UNARY = '/tickwheel.test.Echo/Unary';
const unaryDefinition = (
  packageDefinition['tickwheel.test.Echo'] as Record<
    string,
    { requestSerialize(v: EchoRequest): Buffer; responseDeserialize(b: Buffer): EchoReply }
  >
).Unary;

interface PythonOutcome {
  code: string;
  details: string;
  trailing: Record<string, string>;
  response: string | null;
  elapsed_ms: number;
}

let server: Running | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(options: ServerDeadlineInterceptorOptions): Promise<{ log: HandlerLog; address: string }> {
  const log = newLog();
  server = await startServer([[EchoService.service, echoImplementation(log)]], {
    interceptors: [serverDeadlineInterceptor(options)],
  });
  return { log, address: server.address };
}

async function pythonCall(address: string, request: EchoRequest, timeoutSeconds: number): Promise<PythonOutcome> {
  const hex = unaryDefinition.requestSerialize(request).toString('hex');
  const { stdout } = await run(PYTHON, [SCRIPT, address, UNARY, hex, String(timeoutSeconds)], { timeout: 30_000 });
  return JSON.parse(stdout) as PythonOutcome;
}

describe('python-interop', () => {
  it('sends a Python client DEADLINE_EXCEEDED, naming the limit, when the server max fires first', async () => {
    const { log, address } = await serve({ maxTimeoutMs: 100 });
    const outcome = await pythonCall(address, { text: 'py', delayMs: -1 }, 5);
    expect(outcome.code).toBe('DEADLINE_EXCEEDED');
    // grpc-js's own text, which gRPC clients match on; the limit, budget and method in the trailer.
    expect(outcome.details).toBe('Deadline exceeded');
    expect(outcome.trailing['tickwheel-deadline']).toBe(`limit=max; budget-ms=100; path=${UNARY}`);
    expect(outcome.elapsed_ms).toBeGreaterThanOrEqual(100);
    expect(outcome.elapsed_ms).toBeLessThan(3_000);
    expect((log.signals[0]?.reason as DOMException).name).toBe('TimeoutError');
  });

  it('reads the Python client’s grpc-timeout as the handler’s deadline and ends the call at it', async () => {
    const { log, address } = await serve({});
    const outcome = await pythonCall(address, { text: 'py', delayMs: -1 }, 0.3);
    expect(outcome.code).toBe('DEADLINE_EXCEEDED');
    expect(outcome.elapsed_ms).toBeGreaterThanOrEqual(250);
    expect(log.started).toEqual(['Unary']);
    const signal = log.signals[0]!;
    // Python's own timer and our server's fire together; either way the handler is told.
    await new Promise<void>((resolve) =>
      signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve()),
    );
    expect(signal.aborted).toBe(true);
  });

  it('answers a fast Python call within its deadline, with the budget ambient in the handler', async () => {
    const { address } = await serve({ maxTimeoutMs: 10_000 });
    const outcome = await pythonCall(address, { text: 'hello from python', delayMs: 0 }, 2);
    expect(outcome.code).toBe('OK');
    const reply = unaryDefinition.responseDeserialize(Buffer.from(outcome.response!, 'hex'));
    expect(reply.text).toBe('hello from python');
    expect(reply.remainingMs).toBeGreaterThan(500);
    // gRPC's C core rounds the grpc-timeout it sends up to a coarser figure (2 s may go out as 2.01 s).
    expect(reply.remainingMs).toBeLessThanOrEqual(2_100);
  });
});

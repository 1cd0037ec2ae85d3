import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { currentDeadline } from '@tickwheel/core';

/** The fixture service, loaded the way grpc-js users load theirs. */
export const packageDefinition = protoLoader.loadSync(path.join(__dirname, '..', 'fixtures', 'echo.proto'), {
  keepCase: false,
  longs: Number,
  defaults: true,
});
const proto = grpc.loadPackageDefinition(packageDefinition) as unknown as {
  tickwheel: { test: { Echo: grpc.ServiceClientConstructor; Other: grpc.ServiceClientConstructor } };
};
export const EchoService = proto.tickwheel.test.Echo;
export const OtherService = proto.tickwheel.test.Other;

export interface EchoRequest {
  text: string;
  delayMs?: number;
  count?: number;
}
export interface EchoReply {
  text: string;
  remainingMs: number;
}

/** The typed client surface the tests use (grpc-js's generated clients are untyped here). */
export interface EchoClient extends grpc.Client {
  Unary(
    req: EchoRequest,
    options: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: EchoReply) => void,
  ): grpc.ClientUnaryCall;
  Unary(
    req: EchoRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: EchoReply) => void,
  ): grpc.ClientUnaryCall;
  ServerStream(req: EchoRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<EchoReply>;
  ClientStream(
    options: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: EchoReply) => void,
  ): grpc.ClientWritableStream<EchoRequest>;
  Bidi(options?: grpc.CallOptions): grpc.ClientDuplexStream<EchoRequest, EchoReply>;
}

/** What a handler saw: filled in by {@link echoImplementation}. */
export interface HandlerLog {
  /** Calls that reached a handler, by method name. */
  started: string[];
  /** For each handler, its ambient deadline's signal (undefined when it had none). */
  signals: Array<AbortSignal | undefined>;
  /** For each handler, its ambient remaining budget when it started (-1 when it had none). */
  remaining: number[];
  /** Resolves each time a handler starts. */
  onStart: Array<() => void>;
}

export function newLog(): HandlerLog {
  return { started: [], signals: [], remaining: [], onStart: [] };
}

/** Resolves when the next handler starts. */
export function nextStart(log: HandlerLog): Promise<void> {
  return new Promise((resolve) => log.onStart.push(resolve));
}

function remainingNow(): number {
  return currentDeadline()?.remaining() ?? -1;
}

function record(log: HandlerLog, method: string): void {
  log.started.push(method);
  log.signals.push(currentDeadline()?.signal);
  log.remaining.push(remainingNow());
  for (const resolve of log.onStart.splice(0)) resolve();
}

/** Waits `ms` (negative: forever, until the call ends), then runs `fn` unless the call ended. */
function later(ms: number, call: { cancelled: boolean }, fn: () => void): void {
  if (ms < 0) return;
  setTimeout(() => {
    if (!call.cancelled) fn();
  }, ms);
}

/**
 * Echo handlers driven by the request: `delayMs` before answering (-1: never), `count` messages
 * for a server stream. Every reply carries the handler's ambient remaining budget.
 */
export function echoImplementation(log: HandlerLog): grpc.UntypedServiceImplementation {
  return {
    Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
      record(log, 'Unary');
      const remainingMs = remainingNow();
      const reply = (): void => callback(null, { text: call.request.text, remainingMs });
      if (call.request.delayMs === 0) reply();
      else if (call.request.delayMs! > 0) setTimeout(reply, call.request.delayMs);
    },
    ServerStream(call: grpc.ServerWritableStream<EchoRequest, EchoReply>) {
      record(log, 'ServerStream');
      const remainingMs = remainingNow();
      let sent = 0;
      const tick = (): void => {
        if (sent === call.request.count) {
          call.end();
          return;
        }
        sent++;
        call.write({ text: `${call.request.text}#${sent}`, remainingMs });
        later(call.request.delayMs ?? 0, call, tick);
      };
      later(call.request.delayMs ?? 0, call, tick);
    },
    ClientStream(call: grpc.ServerReadableStream<EchoRequest, EchoReply>, callback: grpc.sendUnaryData<EchoReply>) {
      record(log, 'ClientStream');
      const remainingMs = remainingNow();
      const texts: string[] = [];
      let delayMs = 0;
      call.on('data', (req: EchoRequest) => {
        texts.push(req.text);
        delayMs = req.delayMs ?? 0;
      });
      call.on('end', () => later(delayMs, call, () => callback(null, { text: texts.join(','), remainingMs })));
    },
    Bidi(call: grpc.ServerDuplexStream<EchoRequest, EchoReply>) {
      record(log, 'Bidi');
      call.on('data', (req: EchoRequest) => {
        // Read per message: the ambient deadline must reach the stream's event handlers too.
        const remainingMs = remainingNow();
        const write = (): void => void call.write({ text: req.text, remainingMs });
        if (req.delayMs === 0) write();
        else later(req.delayMs ?? 0, call, write);
      });
      call.on('end', () => call.end());
    },
  };
}

export interface Running {
  server: grpc.Server;
  port: number;
  address: string;
  close(): Promise<void>;
}

/** Starts a grpc-js server on 127.0.0.1 with an ephemeral port. */
export async function startServer(
  services: Array<[grpc.ServiceDefinition, grpc.UntypedServiceImplementation]>,
  options: grpc.ServerOptions = {},
): Promise<Running> {
  const server = new grpc.Server(options);
  for (const [definition, implementation] of services) server.addService(definition, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, boundPort) =>
      err ? reject(err) : resolve(boundPort),
    ),
  );
  return {
    server,
    port,
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

/** A client of `service` at `address`, with `interceptors`. */
export function echoClient(address: string, interceptors: grpc.Interceptor[] = [], service = EchoService): EchoClient {
  return new service(address, grpc.credentials.createInsecure(), { interceptors }) as unknown as EchoClient;
}

/** A unary call as a promise of its outcome. */
export function unary(
  client: EchoClient,
  req: EchoRequest,
  options: grpc.CallOptions = {},
  metadata?: grpc.Metadata,
): Promise<{ err: grpc.ServiceError | null; res?: EchoReply; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (err: grpc.ServiceError | null, res?: EchoReply): void =>
      resolve({ err, res, ms: performance.now() - started });
    if (metadata) client.Unary(req, metadata, options, done);
    else client.Unary(req, options, done);
  });
}

/** Collects a response stream: its messages and how it ended. */
export function collect(
  stream: grpc.ClientReadableStream<EchoReply> | grpc.ClientDuplexStream<EchoRequest, EchoReply>,
): Promise<{ messages: EchoReply[]; err: grpc.ServiceError | null; ms: number }> {
  const started = performance.now();
  const messages: EchoReply[] = [];
  return new Promise((resolve) => {
    stream.on('data', (m: EchoReply) => messages.push(m));
    stream.on('error', (err: grpc.ServiceError) => resolve({ messages, err, ms: performance.now() - started }));
    stream.on('status', (status: grpc.StatusObject) => {
      if (status.code === grpc.status.OK) resolve({ messages, err: null, ms: performance.now() - started });
    });
  });
}

/** Waits until the client's channel is connected, so timings exclude the first connect. */
export function ready(client: grpc.Client): Promise<void> {
  return new Promise((resolve, reject) =>
    client.waitForReady(Date.now() + 5_000, (err) => (err ? reject(err) : resolve())),
  );
}

/**
 * What a server's DEADLINE_EXCEEDED says: grpc-js's details text, and our `tickwheel-deadline`
 * trailer (undefined when the server did not send one).
 */
export function serverDeadline(err: { code: number; details: string; metadata?: grpc.Metadata } | null | undefined): {
  code: number | undefined;
  details: string | undefined;
  trailer: string | undefined;
} {
  const trailer = err?.metadata?.get('tickwheel-deadline')[0];
  return { code: err?.code, details: err?.details, trailer: trailer === undefined ? undefined : String(trailer) };
}

/** {@link serverDeadline} of our server for `limit`, `budgetMs` and `path`. */
export function ourServerDeadline(limit: string, budgetMs: number, path: string) {
  return {
    code: grpc.status.DEADLINE_EXCEEDED,
    details: 'Deadline exceeded',
    trailer: `limit=${limit}; budget-ms=${budgetMs}; path=${path}`,
  };
}

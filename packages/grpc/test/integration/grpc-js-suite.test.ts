import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deadlineInterceptor } from '../../src/deadline-interceptor.js';
import { serverDeadlineInterceptor } from '../../src/server-deadline-interceptor.js';

// grpc-js's own tests (github:grpc/grpc-node, packages/grpc-js/test/, branch 1.14.x), translated
// from mocha to vitest with their assertions kept, and run with our interceptors installed the
// way a user installs them: deadlineInterceptor({ timeoutMs: 600_000 }) on every client (a
// limit far too long to fire, so every call is on the wheel and carries our grpc-timeout), and
// serverDeadlineInterceptor() first on every server. Each describe names its source file, each
// test keeps its original title. Servers bind port 0 on loopback and are shut down after each test.

/* eslint-disable @typescript-eslint/no-explicit-any -- the originals drive untyped generated clients */

const TestService = grpc.loadPackageDefinition(
  protoLoader.loadSync(path.join(__dirname, '..', 'fixtures', 'test_service.proto'), {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  }),
).TestService as grpc.ServiceClientConstructor;

const servers: grpc.Server[] = [];
const clients: grpc.Client[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
  for (const server of servers.splice(0)) server.forceShutdown();
});

/** Binds `server` to an ephemeral loopback port. */
function bind(server: grpc.Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );
}

/** A server with our interceptor, shut down after the test. */
function startServer(implementation: grpc.UntypedServiceImplementation): Promise<number> {
  const server = new grpc.Server({ interceptors: [serverDeadlineInterceptor()] });
  servers.push(server);
  server.addService(TestService.service, implementation);
  return bind(server);
}

function newClient<T extends grpc.Client = grpc.Client & Record<string, any>>(
  port: number,
  Client: new (
    address: string,
    credentials: grpc.ChannelCredentials,
    options: grpc.ClientOptions,
  ) => T = TestService as any,
  closeAfterEach = true,
): T {
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    interceptors: [deadlineInterceptor({ timeoutMs: 600_000 })],
  });
  if (closeAfterEach) clients.push(client);
  return client;
}

/** A port nothing listens on: bound by a server that is then shut down (port 0, never a guess). */
async function closedPort(): Promise<number> {
  const server = new grpc.Server();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  server.forceShutdown();
  return port;
}

function statusOf(call: grpc.ClientReadableStream<unknown> | grpc.ClientDuplexStream<unknown, unknown>) {
  call.on('error', () => {});
  return new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
}

describe('test-server-deadlines.ts: Server deadlines', () => {
  async function setup() {
    const port = await startServer({
      unary(_call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) {
        setTimeout(() => cb(null, {}), 2000);
      },
    });
    return newClient(port);
  }

  function unaryWith(client: grpc.Client & Record<string, any>, metadata: grpc.Metadata) {
    const { path: methodPath, requestSerialize, responseDeserialize } = client.unary;
    return new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(methodPath, requestSerialize, responseDeserialize, {}, metadata, {}, (error) =>
        resolve(error),
      ),
    );
  }

  it('works with deadlines', async () => {
    const client = await setup();
    const metadata = new grpc.Metadata();
    metadata.set('grpc-timeout', '100m');
    const error = await unaryWith(client, metadata);
    expect(error).toBeTruthy();
    expect(error!.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(error!.details).toBe('Deadline exceeded');
  });

  it('rejects invalid deadline', async () => {
    const client = await setup();
    const metadata = new grpc.Metadata();
    metadata.set('grpc-timeout', 'Infinity');
    const error = await unaryWith(client, metadata);
    expect(error).toBeTruthy();
    expect(error!.code).toBe(grpc.status.INTERNAL);
    expect(error!.details).toMatch(/^Invalid grpc-timeout value/);
  });
});

describe('test-server-deadlines.ts: Cancellation', () => {
  it('handles requests cancelled by the client', async () => {
    let inHandler = false;
    let cancelledInServer = false;
    const port = await startServer({
      serverStream(stream: grpc.ServerWritableStream<any, any>) {
        inHandler = true;
        stream.on('cancelled', () => {
          stream.write({});
          stream.end();
          cancelledInServer = true;
        });
      },
    });
    const client = newClient(port);
    const call = client.serverStream({}) as grpc.ClientReadableStream<unknown>;
    const data: unknown[] = [];
    call.on('data', (message) => data.push(message));
    const error = new Promise<grpc.ServiceError>((resolve) => call.on('error', resolve));
    while (!inHandler) await new Promise((resolve) => setImmediate(resolve));
    call.cancel();
    const { code, details } = await error;
    expect(code).toBe(grpc.status.CANCELLED);
    expect(details).toBe('Cancelled on client');
    while (!cancelledInServer) await new Promise((resolve) => setImmediate(resolve));
    expect(data).toEqual([]);
  });
});

describe('test-call-propagation.ts: Call propagation', () => {
  // As in the original: one backend and one proxy server for the whole block, their clients
  // shared (so only the first test meets channels that are still connecting), and the proxy's
  // handlers replaced test by test.
  let client: any;
  let proxyServer: grpc.Server;
  let proxyClient: any;

  beforeAll(async () => {
    const backend = new grpc.Server({ interceptors: [serverDeadlineInterceptor()] });
    backend.addService(TestService.service, {
      unary: () => {},
      clientStream: () => {},
      serverStream: () => {},
      bidiStream: () => {},
    });
    proxyServer = new grpc.Server({ interceptors: [serverDeadlineInterceptor()] });
    client = newClient(await bind(backend), TestService, false);
    proxyClient = newClient(await bind(proxyServer), TestService, false);
  });
  afterEach(() => {
    proxyServer.removeService(TestService.service);
  });
  afterAll(() => {
    (client as grpc.Client).close();
    (proxyClient as grpc.Client).close();
    proxyServer.forceShutdown();
  });

  function setup(proxyImplementation: (backendClient: any) => grpc.UntypedServiceImplementation): Promise<any> {
    proxyServer.addService(TestService.service, proxyImplementation(client));
    return Promise.resolve(proxyClient);
  }

  describe('Cancellation', () => {
    it('should work with unary requests', async () => {
      let call: grpc.ClientUnaryCall;
      let inner!: Promise<grpc.ServiceError>;
      const proxyClient = await setup((client) => ({
        unary: (parent: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
          inner = new Promise((resolve) =>
            client.unary(parent.request, { parent }, (error: grpc.ServiceError, value: unknown) => {
              callback(error, value);
              resolve(error);
            }),
          );
          call.cancel();
        },
      }));
      const outer = new Promise<grpc.ServiceError>((resolve) => {
        call = proxyClient.unary({}, (error: grpc.ServiceError) => resolve(error));
      });
      expect((await outer).code).toBe(grpc.status.CANCELLED);
      expect((await inner).code).toBe(grpc.status.CANCELLED);
    });

    it('Should work with client streaming requests', async () => {
      let call: grpc.ClientWritableStream<unknown>;
      let inner!: Promise<grpc.ServiceError>;
      const proxyClient = await setup((client) => ({
        clientStream: (parent: grpc.ServerReadableStream<any, any>, callback: grpc.sendUnaryData<any>) => {
          inner = new Promise((resolve) =>
            client.clientStream({ parent }, (error: grpc.ServiceError, value: unknown) => {
              callback(error, value);
              resolve(error);
            }),
          );
          call.cancel();
        },
      }));
      const outer = new Promise<grpc.ServiceError>((resolve) => {
        call = proxyClient.clientStream((error: grpc.ServiceError) => resolve(error));
      });
      expect((await outer).code).toBe(grpc.status.CANCELLED);
      expect((await inner).code).toBe(grpc.status.CANCELLED);
    });

    it('Should work with server streaming requests', async () => {
      let inner!: Promise<grpc.StatusObject>;
      const proxyClient = await setup((client) => ({
        serverStream: (parent: grpc.ServerWritableStream<any, any>) => {
          inner = statusOf(client.serverStream(parent.request, { parent }));
          call.cancel();
        },
      }));
      const call: grpc.ClientReadableStream<unknown> = proxyClient.serverStream({});
      expect((await statusOf(call)).code).toBe(grpc.status.CANCELLED);
      expect((await inner).code).toBe(grpc.status.CANCELLED);
    });

    it('Should work with bidi streaming requests', async () => {
      let inner!: Promise<grpc.StatusObject>;
      const proxyClient = await setup((client) => ({
        bidiStream: (parent: grpc.ServerDuplexStream<any, any>) => {
          inner = statusOf(client.bidiStream({ parent }));
          call.cancel();
        },
      }));
      const call: grpc.ClientDuplexStream<unknown, unknown> = proxyClient.bidiStream();
      expect((await statusOf(call)).code).toBe(grpc.status.CANCELLED);
      expect((await inner).code).toBe(grpc.status.CANCELLED);
    });
  });

  describe('Deadlines', () => {
    const deadline = (): Date => {
      const date = new Date();
      date.setMilliseconds(date.getMilliseconds() + 100);
      return date;
    };

    it('should work with unary requests', async () => {
      let inner!: Promise<grpc.ServiceError>;
      const proxyClient = await setup((client) => ({
        unary: (parent: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
          inner = new Promise((resolve) =>
            client.unary(
              parent.request,
              { parent, propagate_flags: grpc.propagate.DEADLINE },
              (error: grpc.ServiceError, value: unknown) => {
                callback(error, value);
                resolve(error);
              },
            ),
          );
        },
      }));
      const outer = await new Promise<grpc.ServiceError>((resolve) =>
        proxyClient.unary({}, { deadline: deadline() }, (error: grpc.ServiceError) => resolve(error)),
      );
      expect(outer.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect((await inner).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    });

    it('Should work with client streaming requests', async () => {
      let inner!: Promise<grpc.ServiceError>;
      const proxyClient = await setup((client) => ({
        clientStream: (parent: grpc.ServerReadableStream<any, any>, callback: grpc.sendUnaryData<any>) => {
          inner = new Promise((resolve) =>
            client.clientStream(
              { parent, propagate_flags: grpc.propagate.DEADLINE },
              (error: grpc.ServiceError, value: unknown) => {
                callback(error, value);
                resolve(error);
              },
            ),
          );
        },
      }));
      const outer = await new Promise<grpc.ServiceError>((resolve) =>
        proxyClient.clientStream(
          { deadline: deadline(), propagate_flags: grpc.propagate.DEADLINE },
          (error: grpc.ServiceError) => resolve(error),
        ),
      );
      expect(outer.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect((await inner).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    });

    it('Should work with server streaming requests', async () => {
      let inner!: Promise<grpc.StatusObject>;
      const proxyClient = await setup((client) => ({
        serverStream: (parent: grpc.ServerWritableStream<any, any>) => {
          inner = statusOf(client.serverStream(parent.request, { parent, propagate_flags: grpc.propagate.DEADLINE }));
        },
      }));
      const call = proxyClient.serverStream({}, { deadline: deadline() });
      expect((await statusOf(call)).code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect((await inner).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    });

    it('Should work with bidi streaming requests', async () => {
      let inner!: Promise<grpc.StatusObject>;
      const proxyClient = await setup((client) => ({
        bidiStream: (parent: grpc.ServerDuplexStream<any, any>) => {
          inner = statusOf(client.bidiStream({ parent, propagate_flags: grpc.propagate.DEADLINE }));
        },
      }));
      const call = proxyClient.bidiStream({ deadline: deadline() });
      expect((await statusOf(call)).code).toBe(grpc.status.DEADLINE_EXCEEDED);
      expect((await inner).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    });
  });
});

describe('test-client.ts: Client', () => {
  it('should call the waitForReady callback only once, when channel connectivity state is READY', async () => {
    const port = await startServer({});
    const client = newClient(port, grpc.Client);
    // 500 ms rather than the original's 100: a connect on a loaded CI machine can take longer.
    const deadline = Date.now() + 500;
    let calledTimes = 0;
    client.waitForReady(deadline, (err) => {
      expect(err).toBeUndefined();
      expect(client.getChannel().getConnectivityState(true)).toBe(grpc.connectivityState.READY);
      calledTimes += 1;
    });
    await new Promise((resolve) => setTimeout(resolve, deadline - Date.now()));
    expect(calledTimes).toBe(1);
  });
});

describe('test-client.ts: Client without a server', () => {
  function call(client: grpc.Client, metadata?: grpc.Metadata) {
    return new Promise<grpc.ServiceError | null>((resolve) => {
      const done = (error: grpc.ServiceError | null): void => resolve(error);
      if (metadata === undefined) {
        client.makeUnaryRequest(
          '/service/method',
          (x: Buffer) => x,
          (x: Buffer) => x,
          Buffer.from([]),
          done,
        );
      } else {
        client.makeUnaryRequest(
          '/service/method',
          (x: Buffer) => x,
          (x: Buffer) => x,
          Buffer.from([]),
          metadata,
          done,
        );
      }
    });
  }

  it('should fail multiple calls to the nonexistent server', async () => {
    const client = newClient(await closedPort(), grpc.Client);
    expect((await call(client))?.code).toBe(grpc.status.UNAVAILABLE);
    expect((await call(client))?.code).toBe(grpc.status.UNAVAILABLE);
  });

  it('close should force calls to end', async () => {
    const client = newClient(await closedPort(), grpc.Client);
    const outcome = call(client, new grpc.Metadata({ waitForReady: true }));
    client.close();
    expect((await outcome)?.code).toBe(grpc.status.UNAVAILABLE);
  });
});

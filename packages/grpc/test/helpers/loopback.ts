/**
 * Echo servers and clients on 127.0.0.1 for the integration tests: each started with its
 * interceptors, each client connected before it is handed out, all closed by `close()`.
 * Test code only; depends on grpc-js and the echo fixture (echo.ts).
 */
import type * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach } from 'vitest';
import {
  echoClient,
  echoImplementation,
  EchoService,
  newLog,
  ready,
  startServer,
  type EchoClient,
  type Running,
} from './echo.js';

export class Loopback {
  readonly #servers: Running[] = [];
  readonly #clients: grpc.Client[] = [];

  /** An Echo server with `interceptors`, answering with `implementation` (the echo fixture by default). */
  async server(
    interceptors: grpc.ServerInterceptor[] = [],
    implementation: grpc.UntypedServiceImplementation = echoImplementation(newLog()),
  ): Promise<Running> {
    const running = await startServer([[EchoService.service, implementation]], { interceptors });
    this.#servers.push(running);
    return running;
  }

  /** A client of the Echo service at `address` with `interceptors`, already connected. */
  async client(address: string, interceptors: grpc.Interceptor[] = []): Promise<EchoClient> {
    const client = echoClient(address, interceptors);
    this.#clients.push(client);
    await ready(client);
    return client;
  }

  /** Closes every client, then every server, this loopback started. */
  async close(): Promise<void> {
    for (const client of this.#clients.splice(0)) client.close();
    for (const server of this.#servers.splice(0)) await server.close();
  }
}

/** A loopback closed after each test of the file. */
export function loopbackPerTest(): Loopback {
  const loopback = new Loopback();
  afterEach(() => loopback.close());
  return loopback;
}

/** A loopback closed after the file's last test (servers started in `beforeAll`). */
export function loopbackPerFile(): Loopback {
  const loopback = new Loopback();
  afterAll(() => loopback.close());
  return loopback;
}

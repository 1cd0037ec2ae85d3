/**
 * Loopback plumbing for the integration tests: listen on 127.0.0.1, raw HTTP/1.1 exchanges over a
 * net.Socket, and a clean stop (every socket destroyed, the server closed).
 */
import { once } from 'node:events';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

/** Anything with listen/close/closeAllConnections, as node:http, https and http2 servers are. */
export interface Listening {
  listen(port: number, host: string, cb: () => void): unknown;
  close(cb?: (error?: Error) => void): unknown;
  address(): AddressInfo | string | null;
  closeAllConnections?(): void;
}

/** Stops every server and socket a test started, after each test. */
export function loopback(): {
  listen(server: Listening): Promise<number>;
  connect(port: number): Promise<RawClient>;
} {
  const servers: Listening[] = [];
  const clients: RawClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) client.socket.destroy();
    for (const server of servers.splice(0)) {
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
  return {
    async listen(server) {
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return (server.address() as AddressInfo).port;
    },
    async connect(port) {
      const socket = net.connect(port, '127.0.0.1');
      const client = new RawClient(socket);
      clients.push(client);
      await once(socket, 'connect');
      return client;
    },
  };
}

/** A raw HTTP/1.1 client: writes bytes, collects what comes back, sees the close. */
export class RawClient {
  received = '';
  closed = false;
  private readonly closedPromise: Promise<void>;
  private waiters: Array<() => void> = [];

  constructor(readonly socket: net.Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.received += chunk;
      this.wake();
    });
    socket.on('error', () => {});
    this.closedPromise = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        this.wake();
        resolve();
      }),
    );
  }

  write(data: string): void {
    this.socket.write(data, 'latin1');
  }

  /** Resolves when the server has closed the connection. */
  async whenClosed(): Promise<string> {
    await this.closedPromise;
    return this.received;
  }

  /** Resolves once what was received matches `pattern` (or the socket closed: then it must match). */
  async waitFor(pattern: RegExp): Promise<string> {
    while (!pattern.test(this.received)) {
      if (this.closed) throw new Error(`closed without ${String(pattern)}; got ${JSON.stringify(this.received)}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return this.received;
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

/** A GET request head, HTTP/1.1, keep-alive. */
export function get(path: string, headers: Record<string, string> = {}): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${lines.join('')}\r\n`;
}

/**
 * `arrived(n)` resolves once `server` has emitted `n` requests in all: a test moves a ManualClock
 * only after the request it times has reached the server, however loaded the machine.
 */
export function arrivals(server: {
  on(event: 'request', listener: () => void): unknown;
}): (n?: number) => Promise<void> {
  let count = 0;
  const waiters: Array<() => void> = [];
  server.on('request', () => {
    count++;
    for (const wake of waiters.splice(0)) wake();
  });
  return async (n = 1) => {
    while (count < n) await new Promise<void>((resolve) => waiters.push(resolve));
  };
}

/** Settles the event loop a few turns (for I/O between a client and a server on loopback). */
export async function turns(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

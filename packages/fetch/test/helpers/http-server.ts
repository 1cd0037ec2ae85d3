import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/**
 * A node:http server on 127.0.0.1 with the routes the integration tests need, counting the
 * connections it accepts so tests can see whether keep-alive connections are reused.
 *
 * - `/fast`: 200 "ok" at once
 * - `/slow-headers?ms=N`: the headers after N ms, then "late"
 * - `/trickle?every=E&chunks=K&end=0|1`: a chunk "c" every E ms, K of them, then the end or a stall
 * - `/flaky?ms=N`: the first request of each `key` query waits N ms for its headers, later ones answer at once
 * - `/flood?kib=N&end=0|1`: N KiB of "f" written at once (queued by the server as the client takes them), then the end or a stall
 */
export class TestServer {
  readonly server: http.Server;
  /** Connections accepted since start. */
  connections = 0;
  /** Requests whose response was closed before it finished (the client went away). */
  abandoned = 0;
  requests = 0;
  private readonly sockets = new Set<Socket>();
  private readonly pending = new PendingTimers();
  private readonly flakySeen = new Set<string>();

  constructor() {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 10_000;
    this.server.on('connection', (socket: Socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Live connections right now. */
  get openSockets(): number {
    return this.sockets.size;
  }

  async stop(): Promise<void> {
    this.pending.clear();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private later(ms: number, fn: () => void): void {
    this.pending.later(ms, fn);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.requests++;
    const url = new URL(req.url!, 'http://127.0.0.1');
    const num = (name: string, fallback: number): number => Number(url.searchParams.get(name) ?? fallback);
    res.on('close', () => {
      if (!res.writableFinished) this.abandoned++;
    });
    switch (url.pathname) {
      case '/fast':
        res.end('ok');
        return;
      case '/slow-headers':
        this.later(num('ms', 1_000), () => res.end('late'));
        return;
      case '/flaky': {
        const key = url.searchParams.get('key') ?? '';
        if (this.flakySeen.has(key)) {
          res.end('second time lucky');
          return;
        }
        this.flakySeen.add(key);
        this.later(num('ms', 1_000), () => res.end('too late'));
        return;
      }
      case '/trickle': {
        const every = num('every', 10);
        const chunks = num('chunks', 5);
        const end = url.searchParams.get('end') === '1';
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.flushHeaders();
        let sent = 0;
        const tick = (): void => {
          if (res.destroyed) return;
          if (sent === chunks) {
            if (end) res.end();
            return;
          }
          sent++;
          res.write('c');
          this.later(every, tick);
        };
        this.later(every, tick);
        return;
      }
      case '/flood': {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'f');
        for (let kib = num('kib', 1_024); kib > 0; kib -= 64)
          res.write(kib >= 64 ? chunk : chunk.subarray(0, kib * 1024));
        if (url.searchParams.get('end') === '1') res.end();
        return;
      }
      default:
        res.statusCode = 404;
        res.end();
    }
  }
}

/** The timers a test server has set, so that stopping it clears every one of them. */
export class PendingTimers {
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();

  /** Runs `fn` in `ms`, unless cleared first. */
  later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}

/** Milliseconds since `start`, from performance.now(). */
export function since(start: number): number {
  return performance.now() - start;
}

/** A {@link TestServer} started before the suite's tests and stopped after them; `base()` is its URL. */
export function useTestServer(): { server: TestServer; base: () => string } {
  const server = new TestServer();
  let base = '';
  beforeAll(async () => {
    base = await server.start();
  });
  afterAll(async () => {
    await server.stop();
  });
  return { server, base: () => base };
}

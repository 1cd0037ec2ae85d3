/**
 * A node:http server that reads request bodies the ways the upload tests need: slowly, not at all after a while, or never before answering.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { PendingTimers } from './http-server.js';

/**
 * Routes (every answer says how many body bytes the server read):
 * - `/read`: reads the body at full speed, then 200
 * - `/slow?kib=K&every=E`: reads K KiB every E ms (the socket paused in between), then 200
 * - `/stall?kib=K`: reads K KiB, then stops reading and never answers
 * - `/early`: answers 413 as soon as the request's head arrives, before reading the body, then reads (discards) it
 */
export class UploadServer {
  readonly server: http.Server;
  requests = 0;
  private readonly sockets = new Set<Socket>();
  private readonly pending = new PendingTimers();

  constructor() {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.pending.clear();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.requests++;
    const url = new URL(req.url!, 'http://127.0.0.1');
    const num = (name: string, fallback: number): number => Number(url.searchParams.get(name) ?? fallback);
    let read = 0;
    req.on('error', () => {});
    switch (url.pathname) {
      case '/read':
        req.on('data', (chunk: Buffer) => (read += chunk.length));
        req.on('end', () => res.end(String(read)));
        return;
      case '/slow': {
        const step = num('kib', 64) * 1024;
        const every = num('every', 10);
        req.pause();
        const tick = (): void => {
          let budget = step;
          let chunk: Buffer | null;
          while (budget > 0 && (chunk = req.read() as Buffer | null) !== null) {
            read += chunk.length;
            budget -= chunk.length;
          }
          if (!req.readableEnded) this.pending.later(every, tick);
        };
        req.on('readable', () => {});
        req.on('end', () => res.end(String(read)));
        this.pending.later(every, tick);
        return;
      }
      case '/stall': {
        const limit = num('kib', 1_024) * 1024;
        req.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= limit) req.pause();
        });
        return;
      }
      case '/early':
        // Connection: close, as servers answer a body they will not take: a kept connection could
        // carry the next test's upload into this request's discarded body, so it never stalls.
        res.writeHead(413, { 'content-type': 'text/plain', connection: 'close' });
        res.end('too large');
        // Read only once the answer is out: the client has the 413 while its upload is still going.
        res.on('finish', () => req.resume());
        return;
      default:
        res.statusCode = 404;
        res.end();
    }
  }
}

/** An {@link UploadServer} started before the suite's tests and stopped after them. */
export function useUploadServer(): { server: UploadServer; base: () => string } {
  const server = new UploadServer();
  let base = '';
  beforeAll(async () => {
    base = await server.start();
  });
  afterAll(async () => {
    await server.stop();
  });
  return { server, base: () => base };
}

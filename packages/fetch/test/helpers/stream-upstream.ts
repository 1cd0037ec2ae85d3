import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/** What a route of a {@link StreamUpstream} gets: the exchange, and timers that end with the response. */
export interface Exchange {
  readonly req: http.IncomingMessage;
  readonly res: http.ServerResponse;
  readonly url: URL;
  /** The request body, read in full (empty for a GET). */
  readonly body: string;
  /** Runs `fn` every `ms` until the response closes. */
  readonly every: (ms: number, fn: () => void) => void;
  /** Runs `fn` once after `ms` unless the response closed first. */
  readonly after: (ms: number, fn: () => void) => void;
}

export type Route = (exchange: Exchange) => void;

/**
 * A local upstream that speaks event streams (SSE, NDJSON) as the tests' routes script them, on
 * 127.0.0.1 and an ephemeral port. It counts connections, sockets closed, and responses the
 * client left before they ended, and clears every timer of a response when it closes.
 */
export class StreamUpstream {
  readonly server: http.Server;
  connections = 0;
  socketsClosed = 0;
  /** Responses closed before the server ended them (the client went away). */
  abandoned = 0;
  readonly requests: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders }> = [];
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly routes: Readonly<Record<string, Route>>) {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 10_000;
    this.server.on('connection', (socket: Socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => {
        this.socketsClosed++;
        this.sockets.delete(socket);
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Connections open right now. */
  get openSockets(): number {
    return this.sockets.size;
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url!, 'http://127.0.0.1');
    this.requests.push({ method: req.method!, path: url.pathname, headers: req.headers });
    const own = new Set<NodeJS.Timeout>();
    res.on('close', () => {
      if (!res.writableFinished) this.abandoned++;
      for (const timer of own) {
        clearInterval(timer);
        this.timers.delete(timer);
      }
    });
    const keep = (timer: NodeJS.Timeout): void => {
      own.add(timer);
      this.timers.add(timer);
    };
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const route = this.routes[url.pathname];
      if (route === undefined) {
        res.writeHead(404).end();
        return;
      }
      route({
        req,
        res,
        url,
        body: Buffer.concat(chunks).toString(),
        every: (ms, fn) => keep(setInterval(fn, ms)),
        after: (ms, fn) => keep(setTimeout(fn, ms)),
      });
    });
  }
}

/** Starts a {@link StreamUpstream} with `routes` for the file's tests and stops it after them. */
export function useStreamUpstream(routes: Readonly<Record<string, Route>>): {
  upstream: () => StreamUpstream;
  base: () => string;
} {
  let upstream: StreamUpstream;
  let base = '';
  beforeAll(async () => {
    upstream = new StreamUpstream(routes);
    base = await upstream.start();
  });
  afterAll(async () => {
    await upstream.stop();
  });
  return { upstream: () => upstream, base: () => base };
}

/** The head of an SSE response as servers send it. */
export function sseHead(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/** One SSE event on the wire. */
export function sseEvent(data: string, event?: string, id?: string): string {
  let text = event === undefined ? '' : `event: ${event}\n`;
  if (id !== undefined) text += `id: ${id}\n`;
  for (const line of data.split('\n')) text += `data: ${line}\n`;
  return `${text}\n`;
}

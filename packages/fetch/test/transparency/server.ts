import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import zlib from 'node:zlib';
import { PendingTimers } from '../helpers/http-server.js';

/** What one request brought to the server. */
export interface Received {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const COMPRESSIBLE = 'compressed body, '.repeat(200);
const utf8 = (text: string): Buffer => Buffer.from(text);
const UBER = utf8('ü');
/** An SSE body in pieces: a BOM, a comment, CRLF split across pieces, a character split across two. */
const SSE_PIECES: readonly Buffer[] = [
  Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(': hello\r\n\r\ndata: 1\r')]),
  Buffer.concat([utf8('\n\r\ndata: '), UBER.subarray(0, 1)]),
  Buffer.concat([UBER.subarray(1), utf8('ber\n\nid: 2\nevent: x\ndata: {"a":1}\n')]),
  utf8('\n: keep-alive\n\n'),
];
const NDJSON_PIECES: readonly Buffer[] = [utf8('{"a":1}\n\n{"b":'), utf8('2}\r\n   \n'), utf8('[3]\n')];
/** Bytes that are not valid UTF-8 (ky test/response-consumption.ts uses the same kind). */
const BINARY = Buffer.from([0, 255, 128, 13, 10, 0, 195, 40]);
/** 50 MiB, sent in 64 KiB chunks. */
export const BIG_BYTES = 50 * 2 ** 20;
const BIG_CHUNK = Buffer.alloc(64 * 1024, 0).map((_, i) => i % 251);

/**
 * A node:http server on 127.0.0.1 for the differential suite: each route answers bare fetch
 * and the wrapper alike, and every request is recorded so that scenarios can compare what
 * reached the server.
 *
 * Slow routes (`/trickle`, `/hang`) stop by themselves after 10 s, so no scenario can hang on them.
 */
export class TransparencyServer {
  readonly server: http.Server;
  readonly received: Received[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly pending = new PendingTimers();
  base = '';

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const url = new URL(req.url!, 'http://127.0.0.1');
        const headers = { ...req.headers };
        delete headers.host;
        this.received.push({
          method: req.method!,
          path: url.pathname + url.search,
          headers,
          body: Buffer.concat(chunks).toString('latin1'),
        });
        this.handle(url, req, res);
      });
    });
    // Longer than any scenario's pause between two requests on one connection, even on a loaded
    // machine: a socket the server times out just as the client reuses it is reset (ECONNRESET).
    this.server.keepAliveTimeout = 60_000;
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.base;
  }

  async stop(): Promise<void> {
    this.pending.clear();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The last request the server received. */
  get last(): Received {
    return this.received[this.received.length - 1];
  }

  private later(ms: number, fn: () => void): void {
    this.pending.later(ms, fn);
  }

  private handle(url: URL, req: http.IncomingMessage, res: http.ServerResponse): void {
    const query = (name: string): string | null => url.searchParams.get(name);
    switch (url.pathname) {
      case '/text':
        res.writeHead(200, 'Fine', { 'content-type': 'text/plain;charset=utf-8', 'x-custom': 'a, b' });
        res.end('hello, world');
        return;
      case '/json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"a":[1,2],"b":"ü"}');
        return;
      case '/bad-json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"a":');
        return;
      case '/urlencoded':
        res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' });
        res.end('a=1&b=two+words&a=3');
        return;
      case '/multipart':
        res.writeHead(200, { 'content-type': 'multipart/form-data; boundary=XyZ' });
        res.end(
          '--XyZ\r\nContent-Disposition: form-data; name="field"\r\n\r\nvalue\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nfile body\r\n--XyZ--\r\n',
        );
        return;
      case '/binary':
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(BINARY.length) });
        res.end(BINARY);
        return;
      case '/empty':
        res.end();
        return;
      case '/status':
        res.statusCode = Number(query('code') ?? 200);
        res.end(res.statusCode === 204 || res.statusCode === 304 ? undefined : `status ${res.statusCode}`);
        return;
      case '/retry-after':
        res.writeHead(Number(query('code') ?? 503), {
          'retry-after': query('after') ?? '0',
          'content-type': 'text/plain',
        });
        res.end(`retry after ${query('after') ?? '0'}`);
        return;
      case '/late':
        this.pending.later(Number(query('ms') ?? 1_000), () => res.end('late'));
        return;
      case '/echo':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(req.method === 'HEAD' ? undefined : `echo ${req.method}`);
        return;
      case '/redirect':
        res.writeHead(Number(query('status') ?? 302), { location: query('to') ?? '/echo' });
        res.end('moved');
        return;
      case '/loop':
        res.writeHead(302, { location: '/loop' });
        res.end();
        return;
      case '/compressed': {
        const coding = query('coding') ?? 'gzip';
        const encode = { gzip: zlib.gzipSync, deflate: zlib.deflateSync, br: zlib.brotliCompressSync }[
          coding as 'gzip'
        ];
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': coding });
        res.end(encode(COMPRESSIBLE));
        return;
      }
      case '/big': {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(BIG_BYTES) });
        let sent = 0;
        const pump = (): void => {
          while (sent < BIG_BYTES) {
            sent += BIG_CHUNK.length;
            if (!res.write(BIG_CHUNK)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        pump();
        return;
      }
      case '/trickle': {
        // A chunk now, then one every 50 ms until the client goes away (10 s at most).
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first,');
        const started = Date.now();
        const tick = (): void => {
          if (res.destroyed) return;
          if (Date.now() - started > 10_000) {
            res.end();
            return;
          }
          res.write('more,');
          this.later(50, tick);
        };
        this.later(50, tick);
        return;
      }
      case '/sse':
      case '/ndjson': {
        // An event stream in pieces split inside lines, CRLF pairs and a multi-byte character.
        const sse = url.pathname === '/sse';
        res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/x-ndjson' });
        const pieces = sse ? SSE_PIECES : NDJSON_PIECES;
        let next = 0;
        const write = (): void => {
          if (res.destroyed) return;
          if (next === pieces.length) {
            res.end();
            return;
          }
          res.write(pieces[next++]);
          this.later(5, write);
        };
        write();
        return;
      }
      case '/sse-gzip':
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
        res.end(zlib.gzipSync(Buffer.concat(SSE_PIECES)));
        return;
      case '/hang':
        // No headers until the client goes away (10 s at most).
        this.later(10_000, () => res.end('late'));
        return;
      case '/reset-after-headers':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
        this.later(20, () => res.socket?.destroy());
        return;
      case '/reset-before-headers':
        req.socket.destroy();
        return;
      default:
        res.statusCode = 404;
        res.end('not found');
    }
  }
}

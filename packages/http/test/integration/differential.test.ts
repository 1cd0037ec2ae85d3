// Transparency: the same raw requests to a bare node:http server and to one with every limit of serverTimeouts on give the same bytes (Date masked).
import http from 'node:http';
import { once } from 'node:events';
import netModule from 'node:net';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { heartbeat } from '@tickwheel/ws';
import { afterEach, describe, expect, it } from 'vitest';
import { serverTimeouts } from '../../src/index.js';

/** The same handler for both servers: routes for each HTTP feature under test. */
function handler(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = req.url ?? '/';
  if (url === '/etag') {
    if (req.headers['if-none-match'] === '"v1"') {
      res.writeHead(304, { etag: '"v1"' });
      res.end();
    } else {
      res.writeHead(200, { etag: '"v1"', 'content-type': 'text/plain' });
      res.end('versioned');
    }
    return;
  }
  if (url === '/echo') {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.setHeader('x-trailer-count', String(Object.keys(req.trailers).length));
      res.end(`echo:${Buffer.concat(chunks).toString()}`);
    });
    return;
  }
  if (url === '/chunked') {
    res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-checksum' });
    res.write('one,');
    res.write('two,');
    res.addTrailers({ 'x-checksum': 'abc' });
    res.end('three');
    return;
  }
  res.end(`hello ${req.method} ${url}`);
}

const EXCHANGES: Record<string, string> = {
  'keep-alive and pipelining':
    'GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  'HEAD and 304':
    'HEAD /head HTTP/1.1\r\nHost: x\r\n\r\nGET /etag HTTP/1.1\r\nHost: x\r\nIf-None-Match: "v1"\r\n\r\nGET /etag HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  'a chunked request body with trailers':
    'POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 1\r\n\r\nGET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  'a chunked response with trailers': 'GET /chunked HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  'Expect: 100-continue':
    'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\nConnection: close\r\n\r\nbody',
  'HTTP/1.0 without keep-alive': 'GET /old HTTP/1.0\r\n\r\n',
  'a malformed request': 'GARBAGE\r\n\r\n',
};

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function start(wrapped: boolean): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 5_000;
  if (wrapped) {
    serverTimeouts(server, { defaultTimeoutMs: 60_000, headersMs: 60_000, bodyIdleMs: 60_000, keepAliveMs: 5_000 });
  }
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

/** Writes `request` in one go and returns every byte until the server closes, the Date header masked. */
async function exchange(port: number, request: string): Promise<string> {
  const socket = netModule.connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  await once(socket, 'connect');
  socket.write(request, 'latin1');
  await once(socket, 'close');
  return received.replace(/Date: [^\r]+\r\n/g, 'Date: <masked>\r\n');
}

describe('serverTimeouts is invisible when nothing times out', () => {
  it.each(Object.entries(EXCHANGES))('%s: byte for byte as the bare server', async (_name, request) => {
    const bare = await start(false);
    const wrapped = await start(true);
    const expected = await exchange(bare.port, request);
    expect(expected.length).toBeGreaterThan(0);
    expect(await exchange(wrapped.port, request)).toBe(expected);
  });

  it('keeps a WebSocket server on the same HTTP server working, with @tickwheel/ws heartbeat, past every HTTP limit', async () => {
    const server = http.createServer(handler);
    servers.push(server);
    // Limits far shorter than the test: a WebSocket timed by them would die.
    serverTimeouts(server, { defaultTimeoutMs: 100, headersMs: 100, bodyIdleMs: 100, keepAliveMs: 100 });
    const wss = new WebSocketServer({ server });
    const beat = heartbeat(wss, { pingIntervalMs: 600, pongTimeoutMs: 600 });
    const dead: number[] = [];
    beat.on('dead', ({ waitedMs }) => dead.push(waitedMs));
    wss.on('connection', (socket) =>
      socket.on('message', (data) => socket.send(`echo ${(data as Buffer).toString()}`)),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      await once(client, 'open');
      const replies: string[] = [];
      client.on('message', (data) => replies.push((data as Buffer).toString()));
      let pings = 0;
      client.on('ping', () => pings++);
      // Past every HTTP limit, and quiet long enough for the heartbeat to ping.
      for (let i = 0; i < 4; i++) {
        client.send(`m${i}`);
        await new Promise((resolve) => setTimeout(resolve, i === 3 ? 1_000 : 150));
      }
      // A pong later than 600 ms (a loaded machine) is the heartbeat's call, not an HTTP limit's.
      if (dead.length > 0)
        expect.fail(`the heartbeat declared the peer dead after ${dead[0]} ms: the machine is too loaded`);
      expect(replies).toEqual(['echo m0', 'echo m1', 'echo m2', 'echo m3']);
      expect(pings).toBeGreaterThan(0);
      expect(client.readyState).toBe(WebSocket.OPEN);
    } finally {
      beat.stop();
      client.terminate();
      for (const socket of wss.clients) socket.terminate();
      wss.close();
    }
  });
});

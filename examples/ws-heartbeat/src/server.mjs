/**
 * The example's server: one node:http server on 127.0.0.1 that serves the liveness page
 * (`public/index.html`) and carries a ws `WebSocketServer`, watched by `heartbeat()`.
 *
 * Clients name themselves in the URL (`ws://host/?name=alice`). The server pings a connection
 * that has sent nothing for `pingIntervalMs`, terminates it when nothing comes back within
 * `pongTimeoutMs`, reports a connection silent for `readerIdleMs`, and, whenever it has sent a
 * client nothing for `statusEveryMs` (writer idleness), sends it a status message with its
 * liveness as the server sees it. The page shows that message.
 */
import fs from 'node:fs';
import http from 'node:http';
import { WebSocketServer } from 'ws';
import { heartbeat } from '@tickwheel/ws';

const PAGE = fs.readFileSync(new URL('../public/index.html', import.meta.url));

/**
 * Starts the server on a free loopback port (or `port`).
 *
 * @param {{ port?: number, pingIntervalMs?: number, pongTimeoutMs?: number, readerIdleMs?: number, statusEveryMs?: number }} [options]
 * @returns {Promise<{ url: string, wsUrl: string, events: object[], beat: object, names: Map, close(): Promise<void> }>}
 *   `events` is the server's log (t in ms since start): connect, idle, dead, close
 */
export async function startLivenessServer({
  port = 0,
  pingIntervalMs = 300,
  pongTimeoutMs = 150,
  readerIdleMs = 200,
  statusEveryMs = 250,
} = {}) {
  const started = performance.now();
  const at = () => Math.round(performance.now() - started);
  const events = [];
  const names = new Map();
  const http_ = http.createServer((req, res) => {
    if (req.url === '/' || req.url === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    } else {
      res.writeHead(404).end();
    }
  });
  const wss = new WebSocketServer({ server: http_ });
  const beat = heartbeat(wss, { pingIntervalMs, pongTimeoutMs, readerIdleMs, writerIdleMs: statusEveryMs });

  const status = (socket) => {
    const state = beat.state(socket);
    const peers = [...wss.clients].map((s) => ({
      name: names.get(s),
      awaitingPong: beat.state(s)?.awaitingPong ?? false,
    }));
    return JSON.stringify({
      type: 'status',
      name: names.get(socket),
      pingsSent: state?.pingsSent ?? 0,
      rttMs: state?.rttMs === undefined ? null : Math.round(state.rttMs * 100) / 100,
      awaitingPong: state?.awaitingPong ?? false,
      peers,
      stats: beat.stats(),
      limits: { pingIntervalMs, pongTimeoutMs, readerIdleMs },
    });
  };

  wss.on('connection', (socket, req) => {
    const name = new URL(req.url, 'http://127.0.0.1').searchParams.get('name') ?? 'anonymous';
    names.set(socket, name);
    events.push({ t: at(), name, type: 'connect' });
    socket.on('close', (code) => {
      events.push({ t: at(), name, type: 'close', code });
      names.delete(socket);
    });
    socket.send(status(socket));
  });
  beat.on('idle', ({ kind, socket, idleMs, first }) => {
    if (kind === 'writer') {
      socket.send(status(socket));
      return;
    }
    if (first) events.push({ t: at(), name: names.get(socket), type: 'idle', kind, idleMs: Math.round(idleMs) });
  });
  beat.on('dead', ({ socket, waitedMs, state }) => {
    events.push({
      t: at(),
      name: names.get(socket),
      type: 'dead',
      waitedMs: Math.round(waitedMs),
      pingsSent: state.pingsSent,
    });
  });

  await new Promise((resolve) => http_.listen(port, '127.0.0.1', resolve));
  const actual = http_.address().port;
  return {
    url: `http://127.0.0.1:${actual}/`,
    wsUrl: `ws://127.0.0.1:${actual}/`,
    events,
    beat,
    wss,
    names,
    at,
    async close() {
      beat.stop();
      for (const socket of wss.clients) socket.terminate();
      await new Promise((resolve) => wss.close(resolve));
      http_.closeAllConnections();
      await new Promise((resolve) => http_.close(resolve));
    },
  };
}

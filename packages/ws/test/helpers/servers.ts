import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer, type ServerOptions } from 'ws';

/** Everything a test opened, closed by `closeAll()` in afterEach. */
const open: Array<() => Promise<void>> = [];

/** A ws server listening on 127.0.0.1 on a free port, with its own HTTP server. */
export async function startServer(options: ServerOptions = {}): Promise<{ wss: WebSocketServer; url: string }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, ...options });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  open.push(() => closeServer(wss));
  return { wss, url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}` };
}

/**
 * A node:http server on 127.0.0.1 routing upgrades to a `noServer` ws server, as in the ws README;
 * `respond` answers its plain requests (a page for a browser test), 404 by default.
 */
export async function startNoServer(
  respond: http.RequestListener = (_req, res) => res.writeHead(404).end(),
): Promise<{ wss: WebSocketServer; url: string; port: number }> {
  const wss = new WebSocketServer({ noServer: true });
  const server = http.createServer(respond);
  server.on('upgrade', (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(async () => {
    await closeServer(wss);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const port = (server.address() as AddressInfo).port;
  return { wss, url: `ws://127.0.0.1:${port}`, port };
}

async function closeServer(wss: WebSocketServer): Promise<void> {
  for (const client of wss.clients) client.terminate();
  await new Promise<void>((resolve) => wss.close(() => resolve()));
}

/** A ws client, open. */
export async function connect(
  url: string,
  options: ConstructorParameters<typeof WebSocket>[2] = {},
): Promise<WebSocket> {
  const ws = new WebSocket(url, options);
  open.push(async () => {
    if (ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    ws.terminate();
    await closed;
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return ws;
}

/** Registers one more cleanup step for `closeAll()`. */
export function onCleanup(step: () => Promise<void> | void): void {
  open.push(async () => step());
}

/** Closes everything opened since the last call, newest first. */
export async function closeAll(): Promise<void> {
  const steps = open.splice(0).reverse();
  for (const step of steps) await step();
}

/** Resolves on the next `event` of `emitter`, with the first argument. */
export function next<T = unknown>(
  emitter: { once(event: string, listener: (value: T) => void): unknown },
  event: string,
): Promise<T> {
  return new Promise<T>((resolve) => emitter.once(event, resolve));
}

/** Polls `condition` every 10 ms until it holds, or fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

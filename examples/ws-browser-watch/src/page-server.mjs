/**
 * The page's server: public/index.html, the browser entry's ES modules straight from the installed
 * package, and a ws server with `keepaliveMs` whose connections can be told to go silent.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { heartbeat } from '@tickwheel/ws';
import { WebSocketServer } from 'ws';

const PAGE = fileURLToPath(new URL('../public/index.html', import.meta.url));
/** dist/esm/browser of the installed @tickwheel/ws: what `import ... from '@tickwheel/ws/browser'` loads. */
const MODULES = path.dirname(fileURLToPath(import.meta.resolve('@tickwheel/ws/browser')));

/**
 * @param {{ port?: number, keepaliveMs?: number }} [options]
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export async function startPageServer({ port = 0, keepaliveMs = 2_000 } = {}) {
  const wss = new WebSocketServer({ noServer: true });
  const beat = heartbeat(wss, { keepaliveMs });
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      // The page asks its server to vanish: nothing more is sent to it, keepalives included.
      if (String(data) === 'go silent') beat.remove(ws);
    });
  });
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(fs.readFileSync(PAGE));
      return;
    }
    const match = /^\/tickwheel\/([a-z-]+\.js)$/.exec(url.pathname);
    const file = match === null ? undefined : path.join(MODULES, match[1]);
    if (file !== undefined && fs.existsSync(file)) {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(fs.readFileSync(file));
      return;
    }
    res.writeHead(404).end();
  });
  server.on('upgrade', (req, socket, head) =>
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)),
  );
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    async close() {
      beat.stop();
      for (const ws of wss.clients) ws.terminate();
      await new Promise((resolve) => wss.close(resolve));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * ws-browser-watch: a ws server sending keepalives (`keepaliveMs`) and two clients watching it with
 * `watch()` from @tickwheel/ws/browser, the code a web page runs, on Node's own WHATWG WebSocket
 * (the global one on Node 22+, ws's on Node 20):
 *
 * - `busy`: the server sends it a tick every 100 ms, so it never needs a keepalive;
 * - `quiet`: the server sends it nothing of its own, so it gets a keepalive whenever nothing was
 *   sent for `keepaliveMs`; then its path to the server stalls (the server's host vanished: no FIN,
 *   no RST, the socket stays OPEN) and its watch declares the server dead after `silenceMs`.
 *
 * Run: `node examples/ws-browser-watch/src/main.mjs`; in a browser, `node examples/ws-browser-watch/src/serve.mjs`.
 */
import { pathToFileURL } from 'node:url';
import { heartbeat } from '@tickwheel/ws';
import { watch } from '@tickwheel/ws/browser';
import { WebSocket as WsWebSocket, WebSocketServer } from 'ws';
import { startRelay } from './relay.mjs';

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A WHATWG WebSocket: Node's global one where there is one (22+), else ws's, which has the same interface. */
function openSocket(url) {
  const socket = globalThis.WebSocket !== undefined ? new globalThis.WebSocket(url) : new WsWebSocket(url);
  return new Promise((resolve, reject) => {
    socket.addEventListener('open', () => resolve(socket));
    socket.addEventListener('error', () => reject(new Error(`could not connect to ${url}`)));
  });
}

/** Watches `socket` as a page would, counting keepalives and the app's messages apart. */
function watched(socket, silenceMs) {
  const watcher = watch(socket, { silenceMs });
  const seen = { keepalives: 0, appMessages: 0, dead: undefined };
  socket.addEventListener('message', (event) => {
    if (watcher.isKeepalive(event)) seen.keepalives++;
    else seen.appMessages++;
  });
  watcher.addEventListener('dead', (event) => {
    seen.dead = { at: performance.now(), silentMs: Math.round(event.silentMs), readyState: socket.readyState };
  });
  return { watcher, seen };
}

/**
 * Runs the scenario and prints what each client saw.
 *
 * @param {{ keepaliveMs?: number, silenceMs?: number, print?: (line: string) => void }} [options]
 * @returns {Promise<object>} what each client saw, the heartbeat's counters, and a one-line summary
 */
export async function main({ keepaliveMs = 200, silenceMs = 3 * keepaliveMs, print = console.log } = {}) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => wss.once('listening', resolve));
  const beat = heartbeat(wss, { keepaliveMs });
  const ticks = new Set();
  wss.on('connection', (ws, req) => {
    if (!req.url?.includes('busy')) return;
    const tick = setInterval(() => ws.send(JSON.stringify({ type: 'tick' })), 100);
    ticks.add(tick);
    ws.once('close', () => clearInterval(tick));
  });
  const port = wss.address().port;
  const relay = await startRelay(port);
  const kind = globalThis.WebSocket !== undefined ? `Node ${process.version}'s global WebSocket` : "ws's WebSocket";
  print(`server: keepaliveMs ${keepaliveMs}; clients: ${kind}, watch(socket, { silenceMs: ${silenceMs} })`);

  const busySocket = await openSocket(`ws://127.0.0.1:${port}/?name=busy`);
  const quietSocket = await openSocket(`ws://127.0.0.1:${relay.port}/?name=quiet`);
  const busy = watched(busySocket, silenceMs);
  const quiet = watched(quietSocket, silenceMs);
  try {
    await sleep(10 * keepaliveMs);
    print(`busy     ${busy.seen.appMessages} ticks, ${busy.seen.keepalives} keepalives (it is never quiet)`);
    print(`quiet    ${quiet.seen.keepalives} keepalives, no app message, alive: ${quiet.seen.dead === undefined}`);

    const stalledAt = performance.now();
    relay.stall();
    print(`quiet    its path to the server stalls (no FIN, no RST: the socket stays OPEN)`);
    const givesUpAt = performance.now() + silenceMs + 5_000;
    while (quiet.seen.dead === undefined && performance.now() < givesUpAt) await sleep(10);
    const dead = quiet.seen.dead;
    const afterStallMs = dead === undefined ? undefined : Math.round(dead.at - stalledAt);
    print(
      dead === undefined
        ? 'quiet    never declared dead (unexpected)'
        : `quiet    declared dead ${afterStallMs} ms after the stall, ${dead.silentMs} ms after its last message; readyState ${dead.readyState} (CLOSING)`,
    );
    print(`busy     still alive: ${busy.seen.dead === undefined}`);
    const stats = beat.stats();
    return {
      socket: kind,
      limits: { keepaliveMs, silenceMs },
      busy: { ...busy.seen, open: busySocket.readyState === 1 },
      quiet: { ...quiet.seen, afterStallMs },
      stats,
      summary:
        `busy got ${busy.seen.keepalives} keepalives among ${busy.seen.appMessages} ticks, quiet ${quiet.seen.keepalives}; ` +
        `quiet's stalled server declared dead ${afterStallMs} ms after the stall (silenceMs ${silenceMs})`,
    };
  } finally {
    busy.watcher.stop();
    quiet.watcher.stop();
    for (const tick of ticks) clearInterval(tick);
    beat.stop();
    busySocket.close();
    await relay.close();
    for (const ws of wss.clients) ws.terminate();
    await new Promise((resolve) => wss.close(resolve));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();

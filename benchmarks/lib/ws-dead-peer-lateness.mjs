/**
 * How late heartbeat() declares a frozen peer dead, after the last frame the server read from
 * it (issue 39: the bound is pingIntervalMs + pongTimeoutMs, plus pingSlackMs and a tick).
 * Real ws clients on 127.0.0.1, half of them quiet (they only answer pings), half talking (a
 * message every 50-450 ms), each frozen (`pause()`: it reads nothing more, so it neither answers
 * nor sends) at a seeded random point of the 2nd to 4th period; the server's heartbeat runs at
 * the 2,000/500 ms with the default slack (62.5 ms).
 *
 *   node suites/ws.mjs --dead-peer-lateness [module]   # module: what to import heartbeat from (default @tickwheel/ws)
 *
 * Prints each kind's worst and median lateness (dead - last frame) and the bound. A clock
 * measure, not an instruction count: it moves with the machine's load by the event loop's delays.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import { median, prng, sleep } from './harness.mjs';

const PING_INTERVAL_MS = 2_000;
const PONG_TIMEOUT_MS = 500;
const CLIENTS = 32;

/** Runs the measurement with `heartbeat` from `specifier` (a package name or an absolute path) and prints it. */
export async function deadPeerLateness(specifier = '@tickwheel/ws') {
  const { heartbeat } = await import(specifier.startsWith('/') ? pathToFileURL(specifier).href : specifier);

  const random = prng(39);
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => wss.once('listening', resolve));
  const beat = heartbeat(wss, { pingIntervalMs: PING_INTERVAL_MS, pongTimeoutMs: PONG_TIMEOUT_MS });
  const peers = new Map();
  const timers = [];
  beat.on('dead', ({ socket }) => (peers.get(socket).deadAt = performance.now()));
  const startedAt = performance.now();
  for (let i = 0; i < CLIENTS; i++) {
    const accepted = new Promise((resolve) => wss.once('connection', resolve));
    const client = new WebSocket(`ws://127.0.0.1:${wss.address().port}`);
    await new Promise((resolve) => client.once('open', resolve));
    const server = await accepted;
    const peer = {
      talks: i % 2 === 1,
      freezeAt: startedAt + PING_INTERVAL_MS + random() * 3 * PING_INTERVAL_MS,
      lastFrameAt: performance.now(),
      deadAt: undefined,
    };
    peers.set(server, peer);
    const heard = () => void (peer.lastFrameAt = performance.now());
    server.on('pong', heard);
    server.on('message', heard);
    const talk = peer.talks ? setInterval(() => client.send('news'), 50 + random() * 400) : undefined;
    timers.push(
      talk,
      setTimeout(() => {
        clearInterval(talk);
        client.pause();
      }, peer.freezeAt - performance.now()),
    );
  }
  const all = [...peers.values()];
  while (all.some((p) => p.deadAt === undefined) && performance.now() - startedAt < 30_000) {
    await sleep(50);
  }
  for (const t of timers) clearTimeout(t);
  beat.stop();
  for (const socket of wss.clients) socket.terminate();
  wss.close();

  for (const [name, group] of [
    ['quiet', all.filter((p) => !p.talks)],
    ['talking', all.filter((p) => p.talks)],
    ['all', all],
  ]) {
    const late = group.map((p) => (p.deadAt ?? NaN) - p.lastFrameAt);
    console.log(
      `${name}: worst ${Math.round(Math.max(...late))} ms, median ${Math.round(median(late))} ms after the last frame (${group.length} peers, ${group.filter((p) => p.deadAt !== undefined && p.deadAt <= p.freezeAt).length} declared dead before they froze)`,
    );
  }
  console.log(
    `bound: ${PING_INTERVAL_MS} + ${PONG_TIMEOUT_MS} + ${PING_INTERVAL_MS / 32} (slack) + 1 (tick) ms; load average ${os.loadavg()[0].toFixed(1)}`,
  );
}

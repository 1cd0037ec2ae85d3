/**
 * ws-heartbeat: a ws server watched by @tickwheel/ws's heartbeat, and four clients:
 *
 * - `healthy`: chats every 100 ms; it is never pinged (it is never quiet) and stays connected;
 * - `silent`: an in-process client that stops reading its socket (a phone in a tunnel): reported
 *   idle, then pinged, then terminated as dead when no pong comes back;
 * - `killed`: a client process killed with SIGKILL: its kernel closes the TCP connection, so the
 *   server sees the close at once and the heartbeat just drops the connection's timer;
 * - `frozen`: a client process stopped with SIGSTOP (a hung process, or a host gone without a
 *   FIN): the TCP connection stays open and only the heartbeat finds out.
 *
 * Run: `node examples/ws-heartbeat/src/main.mjs`; for the web page, `node examples/ws-heartbeat/src/serve.mjs`.
 */
import { fork } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { startLivenessServer } from './server.mjs';

const CLIENT_PATH = fileURLToPath(new URL('./client-process.mjs', import.meta.url));

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function openClient(wsUrl, name) {
  const ws = new WebSocket(`${wsUrl}?name=${name}`);
  const statuses = [];
  ws.on('message', (data) => statuses.push(JSON.parse(String(data))));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, statuses }));
    ws.once('error', reject);
  });
}

function forkClient(wsUrl, name) {
  const child = fork(CLIENT_PATH, [wsUrl, name], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const open = new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', () => reject(new Error(`client ${name} exited before connecting`)));
  });
  return { name, child, open, exited };
}

/**
 * Runs the scenario and prints the server's account of it.
 *
 * @param {{ pingIntervalMs?: number, pongTimeoutMs?: number, readerIdleMs?: number, print?: (line: string) => void }} [options]
 * @returns {Promise<object>} the server's event log, what happened to each client, and the page check
 */
export async function main({
  pingIntervalMs = 300,
  pongTimeoutMs = 150,
  readerIdleMs = 200,
  print = console.log,
} = {}) {
  const server = await startLivenessServer({ pingIntervalMs, pongTimeoutMs, readerIdleMs, statusEveryMs: 250 });
  const children = [forkClient(server.wsUrl, 'killed'), forkClient(server.wsUrl, 'frozen')];
  let healthy;
  let silent;
  const chats = [];
  try {
    print(
      `server on ${server.url} (page and WebSocket); ping after ${pingIntervalMs} ms of quiet, ${pongTimeoutMs} ms to answer, reader idle after ${readerIdleMs} ms`,
    );
    const page = await fetch(server.url).then(async (res) => ({
      status: res.status,
      type: res.headers.get('content-type'),
      html: await res.text(),
    }));
    healthy = await openClient(server.wsUrl, 'healthy');
    chats.push(setInterval(() => healthy.ws.send('still here'), 100));
    silent = await openClient(server.wsUrl, 'silent');
    chats.push(setInterval(() => silent.ws.send('me too'), 100));
    await Promise.all(children.map((c) => c.open));

    // Let everyone settle for a moment, then break three of them at the same time.
    await sleep(100);
    const brokenAt = server.at();
    clearInterval(chats.pop());
    silent.ws.pause();
    children[0].child.kill('SIGKILL');
    children[1].child.kill('SIGSTOP');
    print(
      `t=${brokenAt} ms: 'silent' stops talking and reading its socket, 'killed' gets SIGKILL, 'frozen' gets SIGSTOP`,
    );

    const ended = (name) => server.events.some((e) => e.name === name && e.type === 'close');
    const waitUntil = performance.now() + 5_000;
    while (!['silent', 'killed', 'frozen'].every(ended) && performance.now() < waitUntil) await sleep(10);
    // Keep the healthy client chatting one more ping interval, to show it is never pinged.
    await sleep(pingIntervalMs);

    for (const e of server.events) {
      const what = {
        connect: 'connected',
        idle: `idle (${e.kind}): nothing received for ${e.idleMs} ms`,
        dead: `terminated as dead: no answer ${e.waitedMs} ms after ping #${e.pingsSent}`,
        close: `closed, code ${e.code}`,
      }[e.type];
      print(`  t=${String(e.t).padStart(4)} ms  ${e.name.padEnd(8)} ${what}`);
    }

    const clients = {};
    for (const name of ['healthy', 'silent', 'killed', 'frozen']) {
      const mine = server.events.filter((e) => e.name === name);
      const close = mine.find((e) => e.type === 'close');
      clients[name] = {
        idle: mine.some((e) => e.type === 'idle'),
        dead: mine.find((e) => e.type === 'dead'),
        closedAfterMs: close ? close.t - brokenAt : undefined,
        closeCode: close?.code,
      };
    }
    const healthyState = server.beat.state([...server.wss.clients].find((s) => server.names.get(s) === 'healthy'));
    clients.healthy.open = healthy.ws.readyState === WebSocket.OPEN;
    clients.healthy.pingsSent = healthyState?.pingsSent;
    clients.healthy.statusMessages = healthy.statuses.length;
    clients.healthy.lastStatus = healthy.statuses.at(-1);
    print(
      `healthy: still open, pinged ${clients.healthy.pingsSent} times (it never went quiet), ${clients.healthy.statusMessages} status messages received`,
    );
    for (const name of ['silent', 'frozen']) {
      print(
        `${name}: found dead ${clients[name].closedAfterMs} ms after it stopped answering (bound: ping ${pingIntervalMs} + pong ${pongTimeoutMs} ms)`,
      );
    }
    print(
      `killed: the kernel closed its TCP connection; the server saw the close ${clients.killed.closedAfterMs} ms after the SIGKILL`,
    );

    return {
      summary:
        `healthy kept (0 pings), silent dead after ${clients.silent.closedAfterMs} ms, frozen dead after ${clients.frozen.closedAfterMs} ms, ` +
        `killed closed by its kernel after ${clients.killed.closedAfterMs} ms`,
      events: server.events,
      clients,
      stats: server.beat.stats(),
      page: { status: page.status, type: page.type, connectsToWebSocket: page.html.includes('new WebSocket(') },
      limits: { pingIntervalMs, pongTimeoutMs, readerIdleMs },
    };
  } finally {
    chats.forEach(clearInterval);
    for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    healthy?.ws.terminate();
    silent?.ws.terminate();
    await server.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}

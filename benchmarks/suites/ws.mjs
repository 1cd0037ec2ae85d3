/**
 * The ws suite: @tickwheel/ws's heartbeat against the heartbeat every ws user copies from the ws
 * README (an `isAlive` flag on each socket, one `setInterval` pinging every client), on N idle
 * WebSocket connections over loopback, in this one process run, candidates alternating:
 *
 * - `tickwheel`: `heartbeat(wss, { pingIntervalMs: P, pongTimeoutMs: T })` on the shared wheel
 *   (default `pingSlackMs`, P / 32);
 * - `readme`: the README pattern with `setInterval(ping, P)`;
 * - `none`: no heartbeat at all (the floor, for the CPU and heap figures only).
 *
 * Each run gets a fresh server in this process and N fresh client connections held by a child
 * process (this same file, started with `--clients`), so the server's figures carry no client
 * work and each process stays within its file-descriptor limit (N sockets each). Per run:
 *
 * 0. warm-up: one run of each candidate on 1 000 connections, not recorded;
 * 1. CPU: `process.cpuUsage()` of the server process over 2 periods P, divided by 2, and the
 *    same divided by the pings sent in that window (CPU per ping: our pings go out every
 *    P + up to pingSlackMs, the README's every P); the 1-minute load average as each window
 *    ends goes into the notes next to the figures (the machine is shared);
 * 2. dead peers: the child stops reading on K of the connections (`ws.pause()`: pings go
 *    unanswered) and reports when; the server logs when each one is terminated. Reported: stall
 *    to termination (p50/p99), and ping to termination (the `pongTimeoutMs` guarantee).
 *
 * Heap per connection has runs of its own, HEAP_ROUNDS per candidate (default 5), alternating,
 * each with the server in a fresh process (this file with `--heap-server`): V8 sizes objects of a
 * class by the properties the first few instances got, so in a shared process the README's
 * `isAlive` on ws's WebSocket was stored in the object (8 B) or in an extra property array
 * (40 B) depending on which candidate happened to create the first sockets. The same sizing
 * makes ws's and Node's own per-socket objects (net.Socket, its WritableState) come out one of
 * two ways, depending on whether the first sockets had been read from and written to before the
 * process had created a few more: 88-95 B per connection apart (3 property arrays against 16 B
 * of in-object room; heap snapshots of 3,000 connections, Node 24), for every candidate alike,
 * at random from one process to the next. So each heap server first takes SHAPING_CONNECTIONS
 * sockets one at a time, pings each and waits for its pong (as a server whose clients arrive over
 * time does), closes them and runs a full GC, which ends the sizing. Each run then:
 * N fresh connections, one heartbeat round (1.5 P after the last one opened, so that every one
 * was pinged and answered), then the heap SETTLED with them open, all of them closed (the
 * candidate still attached), the heap settled again; (open - closed) / N. Settled: full GCs,
 * with a pause between them for callbacks they queue, until two readings of `heapUsed`, each
 * taken right after a GC, differ by less than SETTLE_BYTES (a reading taken after the pause
 * counted the young garbage of the pings and pongs exchanged in it: up to 130 B per connection
 * more for a heartbeat that pings connections as they come due). Measuring what the connections
 * retain against the same process state with them closed, instead of against `heapUsed` before they connected, keeps
 * out what the run allocates once (compiled code, the wheel's levels, a previous run's garbage
 * still reachable): a single GC before connecting and after the round moved a candidate's
 * samples by up to 200 B per connection on Node 22 (2,558 / 2,360 / 2,560 B in one run).
 *
 * Then the mixed-traffic runs, on M fresh connections (default 4 000) of which every other one
 * sends a 16-byte message every TALK_MS (500 ms), the app on the server listening to messages
 * in every candidate: server CPU per period as above, for the three candidates. The heartbeat's
 * own cost is each round's total minus the same round's `none` floor, scaled to the messages the
 * candidate's run delivered; the README pattern pings every socket every period whether it
 * talked or not, ours only the quiet half.
 *
 *   node --expose-gc suites/ws.mjs          # or: npm run bench -- ws
 *
 * BENCH_REPEATS overrides the rounds (default 3), BENCH_WS_HEAP_ROUNDS the heap rounds (default 5),
 * BENCH_WS_CONNECTIONS the N (default 10 000), BENCH_WS_MIXED_CONNECTIONS the M (default 4 000).
 */
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { heartbeat } from '@tickwheel/ws';
import { WebSocket, WebSocketServer } from 'ws';
import { channelInstructionScenarios } from '../lib/channel-overhead.mjs';
import {
  forkWorker,
  gc,
  isMain,
  median,
  percentile,
  printScenario,
  runSuite,
  scenario,
  serveParent,
  sleep,
  summarize,
} from '../lib/harness.mjs';
import { periodInstructionScenarios } from '../lib/ws-period-instructions.mjs';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const HEAP_ROUNDS = Number(process.env.BENCH_WS_HEAP_ROUNDS ?? 5);
/** Heap runs: how many first sockets of the server process go one by one through a ping (see the module comment). */
const SHAPING_CONNECTIONS = 10;
/** The heap is settled when two readings in a row, each after a full GC, differ by less than this. */
const SETTLE_BYTES = 16 * 1024;
const CONNECTIONS = Number(process.env.BENCH_WS_CONNECTIONS ?? 10_000);
/** Heartbeat period (the README's interval and our pingIntervalMs), ms. */
const PERIOD_MS = 2_000;
/** Our pongTimeoutMs. The README pattern has none: a ping's answer is checked one period later. */
const PONG_TIMEOUT_MS = 1_000;
/** Our pingSlackMs: its default, pingIntervalMs / 32. */
const PING_SLACK_MS = PERIOD_MS / 32;
/** Connections that stop answering in the dead-peer phase. */
const STALLED = 200;
/** The shared wheel's resolution. */
const TICK_MS = 1;
const CPU_PERIODS = 2;
const WARMUP_CONNECTIONS = 500;
const MIXED_CONNECTIONS = Number(process.env.BENCH_WS_MIXED_CONNECTIONS ?? 4_000);
/** In the mixed-traffic runs, each talking connection sends one message this often. */
const TALK_MS = 500;
/** The client's talk ticker: every TALK_MS is cut into slots of this length, one group of talkers per slot. */
const TALK_SLOT_MS = 10;
const TALK_MESSAGE = 'x'.repeat(16);

/** Wall-clock time in ms with sub-ms precision, comparable across the two processes. */
const wallNow = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------
// The client process: holds N connections, stalls some on request.

async function clientMain() {
  const sockets = [];
  let talkTimer;
  serveParent({
    /** Opens `count` connections to `url`, `batch` at a time. */
    async connect(url, count) {
      const batch = 250;
      let failed = 0;
      for (let i = 0; i < count; i += batch) {
        const opened = [];
        for (let j = i; j < Math.min(count, i + batch); j++) {
          const ws = new WebSocket(url);
          ws.on('error', () => {});
          opened.push(
            new Promise((resolve) => {
              let open = false;
              ws.once('open', () => {
                open = true;
                sockets.push(ws);
                resolve();
              });
              ws.once('close', () => {
                if (!open) failed++;
                resolve();
              });
            }),
          );
        }
        await Promise.all(opened);
      }
      return { count: sockets.length, failed };
    },
    /** Stalls `count` connections (`pause()`), each at a random moment within `withinMs`. */
    async stall(count, withinMs) {
      // Spread over the connection order and over one period at random, so that the stalls fall
      // at every phase of the heartbeat. Identified by local port (= the server's remote port).
      const step = Math.floor(sockets.length / count);
      const stalls = [];
      await Promise.all(
        Array.from(
          { length: count },
          (_, i) =>
            new Promise((resolve) => {
              setTimeout(() => {
                const ws = sockets[i * step];
                // One the server already terminated (a false positive) cannot stall any more.
                if (ws.readyState === WebSocket.OPEN) {
                  stalls.push({ port: ws._socket.localPort, at: wallNow() });
                  ws.pause();
                }
                resolve();
              }, Math.random() * withinMs);
            }),
        ),
      );
      return { stalls };
    },
    /** Starts every other connection talking. */
    talk() {
      // Every other connection talks; the talkers are spread over the TALK_MS cycle in slots.
      const talkers = sockets.filter((_, i) => i % 2 === 0);
      const slots = TALK_MS / TALK_SLOT_MS;
      let slot = 0;
      talkTimer = setInterval(() => {
        for (let i = slot; i < talkers.length; i += slots) {
          if (talkers[i].readyState === WebSocket.OPEN) talkers[i].send(TALK_MESSAGE);
        }
        slot = (slot + 1) % slots;
      }, TALK_SLOT_MS);
      return { talkers: talkers.length };
    },
    /** Ends every connection. */
    close() {
      clearInterval(talkTimer);
      for (const ws of sockets) ws.terminate();
      sockets.length = 0;
      return true;
    },
  });
}

// ---------------------------------------------------------------------------------------------
// The server side: the candidates.

function onError() {}

/** The ws README's heartbeat, as written there (the error listener is app code every candidate has). */
function attachReadme(wss, detections, portOf) {
  function heartbeatListener() {
    this.isAlive = true;
  }
  wss.on('connection', function connection(ws) {
    ws.isAlive = true;
    ws.on('pong', heartbeatListener);
  });
  const ticks = [];
  // Measurement only: pings sent, for CPU per ping.
  let pings = 0;
  const interval = setInterval(function ping() {
    ticks.push(wallNow());
    wss.clients.forEach(function each(ws) {
      if (ws.isAlive === false) {
        // Measurement only: when, and how long after the ping it sent one period earlier.
        detections.push({ port: portOf.get(ws), at: wallNow(), waitedMs: ticks.at(-1) - ticks.at(-2) });
        return ws.terminate();
      }
      ws.isAlive = false;
      pings++;
      ws.ping();
    });
  }, PERIOD_MS);
  return { stop: () => clearInterval(interval), pings: () => pings };
}

function attachTickwheel(wss, detections, portOf) {
  const beat = heartbeat(wss, {
    pingIntervalMs: PERIOD_MS,
    pongTimeoutMs: PONG_TIMEOUT_MS,
    pingSlackMs: PING_SLACK_MS,
  });
  beat.on('dead', (event) =>
    detections.push({ port: portOf.get(event.socket), at: wallNow(), waitedMs: event.waitedMs }),
  );
  return { stop: () => beat.stop(), pings: () => beat.stats().pingsSent };
}

const CANDIDATES = {
  tickwheel: attachTickwheel,
  readme: attachReadme,
  none: () => ({ stop() {}, pings: () => 0 }),
};

/** The client process (this file with `--clients`), asked to connect, stall, talk and close. */
async function startClients() {
  const clients = forkWorker(fileURLToPath(import.meta.url), ['--clients'], { label: 'ws clients' });
  await clients.ready;
  return clients;
}

/**
 * After a warm-up that takes every connection through one full heartbeat round, the server's
 * CPU (user + system) over CPU_PERIODS periods, per period. `onStart` runs as counting starts.
 */
async function cpuPerPeriod(candidate, onStart = () => {}) {
  await sleep(PERIOD_MS * 1.5);
  onStart();
  const pings0 = candidate.pings();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(PERIOD_MS * CPU_PERIODS);
  const cpu = process.cpuUsage(cpu0);
  const elapsed = performance.now() - t0;
  const perPeriod = PERIOD_MS / elapsed;
  return {
    cpuMsPerPeriod: ((cpu.user + cpu.system) / 1000) * perPeriod,
    pingsPerPeriod: (candidate.pings() - pings0) * perPeriod,
    // The machine is shared: the 1-minute load average as the window ends, kept with each CPU figure.
    load: os.loadavg()[0],
    elapsed,
  };
}

/** One run of one candidate on fresh connections: CPU, and (unless `none`) dead-peer detection. */
async function runOnce(name, child, connections = CONNECTIONS) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, backlog: 4096 });
  await new Promise((resolve) => wss.once('listening', resolve));
  wss.on('connection', (ws) => ws.on('error', onError));
  const detections = [];
  /** Socket to its remote port, filled only after the CPU figure is taken. */
  const portOf = new Map();
  const candidate = CANDIDATES[name](wss, detections, portOf);

  const phase = (what) => process.env.BENCH_DEBUG && console.log(`    ${name} ${connections}: ${what}`);
  // Let the previous run's sockets finish closing.
  await sleep(500);
  let accepted = 0;
  wss.on('connection', () => accepted++);
  const { count, failed } = await child.ask('connect', `ws://127.0.0.1:${wss.address().port}`, connections);
  if (failed > 0) console.log(`  ${name}: ${failed} of ${connections} connections failed to open`);
  // Connections the heartbeat already terminated (a client slow to answer while it was still
  // opening the others) count as accepted; they show up in the false-positive figure.
  while (accepted < count) await sleep(10);
  phase('connected');

  const { cpuMsPerPeriod, pingsPerPeriod, load } = await cpuPerPeriod(candidate);
  phase('measured cpu');
  let stallToDead = [];
  let pingToDead = [];
  if (name !== 'none') {
    for (const ws of wss.clients) portOf.set(ws, ws._socket.remotePort);
    const { stalls } = await child.ask('stall', STALLED, PERIOD_MS);
    const stalledAt = new Map(stalls.map((s) => [s.port, s.at]));
    const stalledDetected = () => detections.filter((d) => stalledAt.has(d.port));
    const deadline = performance.now() + PERIOD_MS * 3 + 2_000;
    while (stalledDetected().length < stalls.length && performance.now() < deadline) await sleep(20);
    const found = stalledDetected();
    if (found.length !== stalls.length)
      throw new Error(`${name}: ${found.length} of ${stalls.length} stalled peers detected`);
    stallToDead = found.map((d) => d.at - stalledAt.get(d.port));
    pingToDead = found.map((d) => d.waitedMs);
  }

  phase('detected');
  candidate.stop();
  // The server closes first, so the TIME_WAIT states stay on its side (a fresh port each run)
  // and do not eat the client's ephemeral ports.
  for (const ws of wss.clients) ws.terminate();
  await child.ask('close');
  await new Promise((resolve) => wss.close(resolve));
  while (wss.clients.size > 0) await sleep(10);
  phase('closed');
  // Healthy (never stalled) connections terminated as dead anywhere in the run.
  const falseDeaths = detections.length - stallToDead.length;
  return { count, cpuMsPerPeriod, pingsPerPeriod, load, stallToDead, pingToDead, falseDeaths };
}

/** `heapUsed` once full GCs stop changing it (see the module comment). */
async function settledHeapUsed() {
  let last = Infinity;
  for (let i = 0; i < 20; i++) {
    // Read right after the GC: what the I/O of the pause below allocates (a heartbeat that pings
    // as connections come due does so all the time) is young garbage, not what they retain.
    gc();
    const used = process.memoryUsage().heapUsed;
    if (Math.abs(used - last) < SETTLE_BYTES) return used;
    last = used;
    // Callbacks the GC queued (weak references, native handles' finalizers) run, and are collected next time.
    await sleep(20);
  }
  return last;
}

/**
 * One heap run of one candidate, in a server process of its own (see the module comment): what N
 * connections retain after a heartbeat round, as the settled heap with them open minus the
 * settled heap once they are closed.
 */
export async function heapRun(name, child, connections = CONNECTIONS) {
  const server = forkWorker(fileURLToPath(import.meta.url), ['--heap-server', name], {
    label: `ws heap server ${name}`,
  });
  const url = await server.ready;
  // The first sockets of the process, one at a time, each through a ping and its pong (see the module comment).
  for (let i = 0; i < SHAPING_CONNECTIONS; i++) {
    await child.ask('connect', url, 1);
    await server.ask('shape');
  }
  await child.ask('close');
  await server.ask('forget');
  const { count } = await child.ask('connect', url, connections);
  const { heapUsed: withConnections, open } = await server.ask('measure-open', count);
  await child.ask('close');
  const closed = await server.ask('measure-closed');
  await server.close();
  return (withConnections - closed) / open;
}

/** The server process of one heap run: the candidate on a fresh server, measured on request. */
async function heapServerMain(name) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, backlog: 4096 });
  await new Promise((resolve) => wss.once('listening', resolve));
  wss.on('connection', (ws) => ws.on('error', onError));
  let accepted = 0;
  wss.on('connection', () => accepted++);
  const candidate = CANDIDATES[name](wss, [], new Map());
  let shaped = 0;
  serveParent(
    {
      /** Pings the newest connection and waits for its pong (see the module comment). */
      async shape() {
        while (accepted <= shaped) await sleep(1);
        shaped++;
        const ws = [...wss.clients].at(-1);
        const answered = new Promise((resolve) => ws.once('pong', resolve));
        ws.ping();
        await answered;
        return true;
      },
      /** Waits for the shaping connections to close, then collects. */
      async forget() {
        while (wss.clients.size > 0) await sleep(10);
        // A full GC also ends V8's slack tracking of every class still in it.
        gc();
        accepted = 0;
        return true;
      },
      /** The settled heap once `count` connections are open and went through a heartbeat round. */
      async 'measure-open'(count) {
        while (accepted < count) await sleep(10);
        // One heartbeat round after the last connection opened: every one was pinged and answered.
        await sleep(PERIOD_MS * 1.5);
        const open = wss.clients.size;
        return { heapUsed: await settledHeapUsed(), open };
      },
      /** The settled heap once every connection is closed; stops the candidate and the server. */
      async 'measure-closed'() {
        for (const ws of wss.clients) ws.terminate();
        while (wss.clients.size > 0) await sleep(10);
        const heapUsed = await settledHeapUsed();
        candidate.stop();
        await new Promise((resolve) => wss.close(resolve));
        return heapUsed;
      },
    },
    { hello: `ws://127.0.0.1:${wss.address().port}` },
  );
}

/**
 * One mixed-traffic run: M fresh connections, every other one talking, the app listening to
 * messages; server CPU per period once every connection went through a heartbeat round.
 */
async function runMixed(name, child, connections = MIXED_CONNECTIONS) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, backlog: 4096 });
  await new Promise((resolve) => wss.once('listening', resolve));
  let received = 0;
  wss.on('connection', (ws) => {
    ws.on('error', onError);
    ws.on('message', () => received++);
  });
  const candidate = CANDIDATES[name](wss, [], new Map());
  await sleep(500);
  const { count } = await child.ask('connect', `ws://127.0.0.1:${wss.address().port}`, connections);
  await child.ask('talk');
  let received0 = 0;
  const { cpuMsPerPeriod, pingsPerPeriod, load, elapsed } = await cpuPerPeriod(candidate, () => (received0 = received));
  const messagesPerPeriod = (received - received0) * (PERIOD_MS / elapsed);
  candidate.stop();
  for (const ws of wss.clients) ws.terminate();
  await child.ask('close');
  await new Promise((resolve) => wss.close(resolve));
  while (wss.clients.size > 0) await sleep(10);
  return { count, cpuMsPerPeriod, pingsPerPeriod, load, messagesPerPeriod };
}

const round2 = (x) => Math.round(x * 100) / 100;
/** `name [loads]` for each candidate: the 1-minute load average at the end of each CPU window, in run order. */
const loadNote = (loads) =>
  `1-min load average at the end of each CPU window: ${Object.entries(loads)
    .map(([n, l]) => `${n} ${l.join('/')}`)
    .join(', ')}`;
/** Medians of pings sent per period, per candidate that pings. */
const pingNote = (pings) =>
  `Pings sent per period (medians): ${Object.entries(pings)
    .filter(([n]) => n !== 'none')
    .map(([n, p]) => `${n} ${Math.round(median(p)).toLocaleString('en-US')}`)
    .join(', ')}`;

export async function run() {
  const t0 = performance.now();
  const child = await startClients();
  const names = Object.keys(CANDIDATES);
  const cpu = Object.fromEntries(names.map((n) => [n, []]));
  const heap = Object.fromEntries(names.map((n) => [n, []]));
  const pings = Object.fromEntries(names.map((n) => [n, []]));
  const cpuPerPing = { tickwheel: [], readme: [] };
  const loads = Object.fromEntries(names.map((n) => [n, []]));
  // Warm-up: one small run of each candidate, so one-time costs (compiled code, lazily built
  // module state, the shared wheel's levels) do not land in the first measured run's figures.
  for (const name of names) {
    await runOnce(name, child, WARMUP_CONNECTIONS);
    console.log(`  warm-up ${name} done`);
  }
  const detect = Object.fromEntries(
    ['tickwheel', 'readme'].map((n) => [
      n,
      { p50: [], p99: [], pingP50: [], pingP99: [], pingMax: [], falseDeaths: [] },
    ]),
  );
  let connections = CONNECTIONS;
  for (let round = 0; round < REPEATS; round++) {
    const order = names.slice(round % names.length).concat(names.slice(0, round % names.length));
    for (const name of order) {
      gc();
      const r = await runOnce(name, child);
      connections = Math.min(connections, r.count);
      cpu[name].push(r.cpuMsPerPeriod);
      pings[name].push(r.pingsPerPeriod);
      loads[name].push(round2(r.load));
      if (name !== 'none') cpuPerPing[name].push((r.cpuMsPerPeriod * 1000) / r.pingsPerPeriod);
      if (name !== 'none') {
        detect[name].p50.push(percentile(r.stallToDead, 50));
        detect[name].p99.push(percentile(r.stallToDead, 99));
        detect[name].pingP50.push(percentile(r.pingToDead, 50));
        detect[name].pingP99.push(percentile(r.pingToDead, 99));
        detect[name].pingMax.push(Math.max(...r.pingToDead));
        detect[name].falseDeaths.push(r.falseDeaths);
      }
      console.log(
        `  round ${round + 1} ${name}: cpu ${r.cpuMsPerPeriod.toFixed(1)} ms/period (load ${r.load.toFixed(2)}), ${Math.round(r.pingsPerPeriod)} pings/period` +
          (name === 'none'
            ? ''
            : `, stall->dead p50 ${percentile(r.stallToDead, 50).toFixed(0)} p99 ${percentile(r.stallToDead, 99).toFixed(0)} ms, ping->dead max ${Math.max(...r.pingToDead).toFixed(1)} ms, healthy terminated ${r.falseDeaths}`),
      );
    }
  }
  // Heap: runs of their own, alternating, HEAP_ROUNDS per candidate.
  for (let round = 0; round < HEAP_ROUNDS; round++) {
    const order = names.slice(round % names.length).concat(names.slice(0, round % names.length));
    for (const name of order) {
      const perConnection = await heapRun(name, child);
      heap[name].push(perConnection);
      console.log(`  heap round ${round + 1} ${name}: ${Math.round(perConnection)} B/conn`);
    }
  }
  // Mixed traffic: half the connections talk. Same alternation; the floor is each round's `none`.
  const mixed = Object.fromEntries(names.map((n) => [n, []]));
  const ownCost = { tickwheel: [], readme: [] };
  let mixedConnections = MIXED_CONNECTIONS;
  let messagesPerPeriod = 0;
  const messages = Object.fromEntries(names.map((n) => [n, []]));
  const mixedPings = Object.fromEntries(names.map((n) => [n, []]));
  const mixedLoads = Object.fromEntries(names.map((n) => [n, []]));
  const ownCostPerPing = { tickwheel: [], readme: [] };
  await runMixed('tickwheel', child, WARMUP_CONNECTIONS);
  for (let round = 0; round < REPEATS; round++) {
    const order = names.slice(round % names.length).concat(names.slice(0, round % names.length));
    const totals = {};
    const delivered = {};
    for (const name of order) {
      gc();
      const r = await runMixed(name, child);
      mixedConnections = Math.min(mixedConnections, r.count);
      messagesPerPeriod = r.messagesPerPeriod;
      totals[name] = r.cpuMsPerPeriod;
      delivered[name] = r.messagesPerPeriod;
      mixed[name].push(r.cpuMsPerPeriod);
      messages[name].push(r.messagesPerPeriod);
      mixedPings[name].push(r.pingsPerPeriod);
      mixedLoads[name].push(round2(r.load));
      console.log(
        `  mixed round ${round + 1} ${name}: cpu ${r.cpuMsPerPeriod.toFixed(1)} ms/period (load ${r.load.toFixed(2)}), ${Math.round(r.messagesPerPeriod)} messages/period, ${Math.round(r.pingsPerPeriod)} pings/period`,
      );
    }
    // The floor is the traffic's own cost, so it is taken at the traffic each candidate carried:
    // a loaded client answering a burst of pings sends fewer messages that period, and a
    // candidate whose run carried less traffic would otherwise be credited with the difference.
    for (const name of ['tickwheel', 'readme']) {
      const own = totals[name] - totals.none * (delivered[name] / delivered.none);
      ownCost[name].push(own);
      ownCostPerPing[name].push((own * 1000) / mixedPings[name].at(-1));
    }
  }

  await child.close();

  const setup = `${connections.toLocaleString('en-US')} idle connections on 127.0.0.1 (clients in a child process), heartbeat period ${PERIOD_MS} ms, our pongTimeoutMs ${PONG_TIMEOUT_MS} and pingSlackMs ${PING_SLACK_MS} (default)`;
  const pick = (field) => Object.fromEntries(Object.entries(detect).map(([n, d]) => [n, d[field]]));
  const scenarios = [
    scenario({
      id: 'cpu-per-period',
      title: 'Server CPU per heartbeat period',
      unit: 'ms',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(cpu),
      target: { ratio: 1 },
      note: `${setup}. user+system CPU of the server process over ${CPU_PERIODS} periods / ${CPU_PERIODS}; 'none' is the floor with no heartbeat. Every idle connection gets one ping and sends one pong per period with either design, and those writes and reads dominate. ${pingNote(pings)} (ours: a quiet connection is pinged pingIntervalMs after its last read, on the pingSlackMs grid, so every pingIntervalMs + up to pingSlackMs). ${loadNote(loads)}.`,
    }),
    scenario({
      id: 'cpu-per-ping',
      title: 'Server CPU per ping sent (idle connections)',
      unit: 'µs',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(cpuPerPing),
      note: `The CPU per period above / the pings sent in that window, per run: the ping's write, its pong's read and each design's own work per connection. ${loadNote(loads)}.`,
    }),
    scenario({
      id: 'heap-per-connection',
      title: 'Server heap per connection',
      unit: 'bytes',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(heap),
      target: { maxOver: 128 },
      note: `${setup}. Runs of their own, ${HEAP_ROUNDS} per candidate, alternating: (heapUsed settled by full GCs with every connection open after one heartbeat round - heapUsed settled again once they all closed, the candidate still attached) / connections; includes ws's own per-connection objects, which 'none' shows alone.`,
    }),
    scenario({
      id: 'detect-p50',
      title: 'Dead-peer detection, stall to termination, p50',
      unit: 'ms',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(pick('p50')),
      note: `${STALLED} of the connections stop reading (ws.pause() in the client), each at a random instant within one period; time until the server terminates each. Ours: at most one quiet period before the ping, then pongTimeoutMs. README: one to two periods.`,
    }),
    scenario({
      id: 'detect-p99',
      title: 'Dead-peer detection, stall to termination, p99',
      unit: 'ms',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(pick('p99')),
      target: { max: PERIOD_MS + PING_SLACK_MS + PONG_TIMEOUT_MS + TICK_MS },
      note: `Target: within one quiet period, the ping slack, pongTimeoutMs and one tick (${PERIOD_MS} + ${PING_SLACK_MS} + ${PONG_TIMEOUT_MS} + ${TICK_MS} ms); the README pattern needs up to two periods.`,
    }),
    scenario({
      id: 'ping-to-dead-p50',
      title: 'Unanswered ping to termination, p50',
      unit: 'ms',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(pick('pingP50')),
      target: { max: PONG_TIMEOUT_MS + TICK_MS },
      note: `Target: pongTimeoutMs + one tick (${PONG_TIMEOUT_MS} + ${TICK_MS} ms).`,
    }),
    scenario({
      id: 'ping-to-dead-p99',
      title: 'Unanswered ping to termination, p99',
      unit: 'ms',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(pick('pingP99')),
      target: { max: PONG_TIMEOUT_MS + 5 },
      note: `Target: pongTimeoutMs + 5 ms (${PONG_TIMEOUT_MS} + 5 ms): one tick plus event-loop delay on a busy server. Ours is the 'dead' event's waitedMs, from lastPingAt (the clock reading right after the pass that sent the ping, which the pong deadline runs from) to the termination; stall to termination above is timed independently by the two processes' clocks. The README pattern checks a ping's answer one full period later.`,
    }),
    scenario({
      id: 'ping-to-dead-max',
      title: 'Unanswered ping to termination, max',
      unit: 'ms',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(pick('pingMax')),
      note: `Worst case of each run; includes event-loop delay on a shared machine.`,
    }),
    scenario({
      id: 'healthy-terminated',
      title: 'Healthy connections terminated as dead',
      unit: 'connections',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(pick('falseDeaths')),
      target: { max: 0 },
      note: `Connections that never stopped reading but were terminated anyway (their pong was not read in time), per run of ${connections.toLocaleString('en-US')}.`,
    }),
  ];
  const mixedSetup = `${mixedConnections.toLocaleString('en-US')} connections on 127.0.0.1, every other one sending a ${TALK_MESSAGE.length}-byte message every ${TALK_MS} ms (${Math.round(messagesPerPeriod).toLocaleString('en-US')} messages per period), the app listening to messages; heartbeat period ${PERIOD_MS} ms`;
  scenarios.push(
    scenario({
      id: 'mixed-cpu-per-period',
      title: 'Mixed traffic (half the connections talk): server CPU per period',
      unit: 'ms',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(mixed),
      note: `${mixedSetup}. Totals; 'none' is the floor (the same traffic with no heartbeat). The README pattern pings every socket every period; ours pings only the quiet half. Messages per period delivered (medians): ${names.map((n) => `${n} ${Math.round(median(messages[n])).toLocaleString('en-US')}`).join(', ')}. ${pingNote(mixedPings)}. ${loadNote(mixedLoads)}.`,
    }),
    scenario({
      id: 'mixed-heartbeat-cpu',
      title: 'Mixed traffic: heartbeat CPU above the no-heartbeat floor, per period',
      unit: 'ms',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(ownCost),
      target: { ratio: 1 / 0.55 },
      note: `${mixedSetup}. Each round's total minus the same round's floor ('none') scaled to the messages that candidate's run delivered (floor x messages / floor's messages; the floor is nearly all message handling), so that a run whose client sent less while answering pings is not credited with the traffic it lost. Messages per period (medians): ${names.map((n) => `${n} ${Math.round(median(messages[n])).toLocaleString('en-US')}`).join(', ')}. Target: at most 0.55x the README pattern's (ratio >= ${(1 / 0.55).toFixed(2)}). ${pingNote(mixedPings)}. ${loadNote(mixedLoads)}.`,
    }),
    scenario({
      id: 'mixed-heartbeat-cpu-per-ping',
      title: 'Mixed traffic: heartbeat CPU above the floor, per ping sent',
      unit: 'µs',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: summarize(ownCostPerPing),
      note: `The heartbeat CPU above the floor / the pings sent in that window, per round: what a quiet connection's ping costs each design, with ours also paying for the talking half it does not ping (one visit per period each). ${loadNote(mixedLoads)}.`,
    }),
  );
  for (const sc of scenarios) printScenario(sc);
  console.log(`  (ws suite took ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  // Issue 27: the same comparisons in instructions per connection per period, which the load
  // does not move (lib/ws-period-instructions.mjs), with the no-heartbeat floor of the same count.
  scenarios.push(...(await periodInstructionScenarios()));
  // Issue 18: what the diagnostics channels cost here, in instructions (lib/channel-overhead.mjs).
  scenarios.push(...(await channelInstructionScenarios('ws')));
  return { scenarios, connections };
}

if (isMain(import.meta.url) && process.argv[2] === '--clients') {
  await clientMain();
} else if (isMain(import.meta.url) && process.argv[2] === '--heap-server') {
  await heapServerMain(process.argv[3]);
} else if (isMain(import.meta.url) && process.argv[2] === '--schedule-count') {
  // The due schedule against a wheel handle per connection, in instructions (lib/ws-schedule-kernel.mjs).
  const { scheduleCounts } = await import('../lib/ws-schedule-kernel.mjs');
  const { nodeBinary } = await import('../lib/runtimes.mjs');
  scheduleCounts(process.argv[3] === '--node' ? nodeBinary(Number(process.argv[4])) : process.execPath);
} else if (isMain(import.meta.url) && process.argv[2] === '--dead-peer-lateness') {
  const { deadPeerLateness } = await import('../lib/ws-dead-peer-lateness.mjs');
  await deadPeerLateness(process.argv[3]);
} else if (isMain(import.meta.url)) {
  await runSuite('ws', run, {
    repeats: REPEATS,
    extra: ({ connections }) => ({
      heapRounds: HEAP_ROUNDS,
      connections,
      mixedConnections: MIXED_CONNECTIONS,
      talkMs: TALK_MS,
      periodMs: PERIOD_MS,
      pongTimeoutMs: PONG_TIMEOUT_MS,
      stalled: STALLED,
    }),
  });
}

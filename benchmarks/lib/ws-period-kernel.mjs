/**
 * One heartbeat candidate on N real loopback WebSocket connections for a number of heartbeat
 * periods, for counting the server's instructions per connection per period under cachegrind
 * (cachegrind.mjs: a long run minus a short run). The candidates are the ws suite's:
 *
 * - `tickwheel`: `heartbeat(wss)` on a wheel of its own whose clock is the system clock stepped
 *   forward by one period at a time (below);
 * - `readme`: the ws README pattern (`isAlive` on each socket, a `'pong'` listener, one pass
 *   pinging every socket), its pass run once per period instead of from a `setInterval`;
 * - `none`: no heartbeat, the floor.
 *
 * The server runs in this process (the one valgrind counts); the N clients run in a child process
 * (this file with `--clients`), which valgrind does not follow, so no client work is counted.
 *
 * Time is stepped so that every run does the same work, whatever the load and however much slower
 * the process runs under valgrind: a period is "the clock moves one period on" (tickwheel: the
 * wheel's clock jumps PERIOD_MS + PING_SLACK_MS, so every connection comes due once; readme: its
 * pass runs), then the kernel waits until every pong of the pings sent has been read. The clock is
 * the core's `SystemClock` with an offset added (`SteppedClock`), so every reading the heartbeat
 * takes is a real `performance.now()` and the heartbeat takes the same paths as on a server (a
 * clock reading shared by the pongs of one I/O poll, see packages/ws/src/poll-reading.ts).
 *
 * Scenarios:
 * - `idle`: the connections say nothing; each gets one ping and answers it per period.
 * - `mixed`: every other connection sends TALK_MESSAGES 16-byte messages per period (before the
 *   step), the app listening to messages in every candidate. The README pattern pings all of
 *   them; tickwheel pings only the quiet half (and visits the talking half once per period).
 *
 * A pong listener counting answers (to know when the period is over) is on every socket in every
 * candidate, and costs each the same.
 *
 *   node --expose-gc lib/ws-period-kernel.mjs <idle|mixed> <tickwheel|readme|none> <periods>
 */
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { SystemClock, TimingWheel } from '@tickwheel/core';
import { heartbeat } from '@tickwheel/ws';
import { WebSocket, WebSocketServer } from 'ws';
import { forkWorker, isMain, serveParent, sleepSync } from './harness.mjs';

/** Connections (BENCH_WS_KERNEL_CONNECTIONS overrides). */
export const KERNEL_CONNECTIONS = Number(process.env.BENCH_WS_KERNEL_CONNECTIONS ?? 1_000);
/** The heartbeat period, in the stepped clock's ms; long, so that real time never makes a pong late. */
const PERIOD_MS = 60_000;
const PONG_TIMEOUT_MS = 30_000;
/** The default ping slack (pingIntervalMs / 32): a step of PERIOD_MS + this brings every connection due. */
const PING_SLACK_MS = PERIOD_MS / 32;
/** Mixed scenario: messages each talking connection sends per period. */
const TALK_MESSAGES = 2;
const TALK_MESSAGE = 'x'.repeat(16);
/**
 * How long the server blocks after its pass (and after asking for the talk), so that every pong
 * (message) is in its socket buffers when it next polls: the poll then reads them all at once,
 * in every run alike, instead of in as many polls as the client's timing happens to give.
 */
const SETTLE_MS = 200;
/** Periods every run starts with (in the short and the long run alike). */
export const WARM_PERIODS = Number(process.env.BENCH_WS_KERNEL_WARM ?? 10);

/**
 * The system clock moved forward by hand: `now()` is `performance.now()` plus the steps taken,
 * and it drives its wheel itself (a `DrivingClock`), waking it when a step passes its armed time.
 * A `SystemClock` underneath, so the heartbeat treats it as the system clock.
 */
class SteppedClock extends SystemClock {
  armedAt = Infinity;
  wake = undefined;

  createDriver(wake) {
    this.wake = wake;
    return {
      arm: (atMs) => (this.armedAt = atMs),
      disarm: () => (this.armedAt = Infinity),
      setRef() {},
      close: () => (this.armedAt = Infinity),
    };
  }

  /** Moves time `ms` on and runs the wheel if it came due. */
  step(ms) {
    // SystemClock adds `sourceOffset` to every reading of performance.now().
    this.sourceOffset += ms;
    this.endJob();
    if (this.armedAt <= this.now()) this.wake();
  }
}

const CANDIDATES = {
  tickwheel(wss) {
    const clock = new SteppedClock();
    const wheel = new TimingWheel({ clock });
    const beat = heartbeat(wss, {
      pingIntervalMs: PERIOD_MS,
      pongTimeoutMs: PONG_TIMEOUT_MS,
      pingSlackMs: PING_SLACK_MS,
      wheel,
    });
    beat.on('dead', () => {
      throw new Error('ws-period kernel: a connection was declared dead');
    });
    return {
      period: () => clock.step(PERIOD_MS + PING_SLACK_MS),
      pings: () => beat.stats().pingsSent,
    };
  },
  readme(wss) {
    // The ws README's heartbeat, as written there; its setInterval callback is `period`.
    function heartbeatListener() {
      this.isAlive = true;
    }
    wss.on('connection', function connection(ws) {
      ws.isAlive = true;
      ws.on('pong', heartbeatListener);
    });
    let pings = 0;
    return {
      period() {
        wss.clients.forEach(function each(ws) {
          if (ws.isAlive === false) return ws.terminate();
          ws.isAlive = false;
          pings++;
          ws.ping();
        });
      },
      pings: () => pings,
    };
  },
  none: () => ({ period() {}, pings: () => 0 }),
};

async function serverMain(scenario, name, periods) {
  // Garbage collections V8 starts from timed tasks (a scavenge when new space is nearly full, the
  // memory reducer when the process looks idle) fall wherever the run's timing puts them; without
  // them, a collection happens when an allocation needs it, at the same point in every run.
  v8.setFlagsFromString('--no-minor-gc-task');
  v8.setFlagsFromString('--no-memory-reducer');
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, backlog: 4096 });
  await new Promise((resolve) => wss.once('listening', resolve));
  let accepted = 0;
  let received = 0;
  let pongs = 0;
  let waitFor = Infinity;
  let reached = () => {};
  /** Everything the server heard: connections, messages, pongs. */
  const heard = () => accepted + received + pongs;
  const count = () => {
    if (heard() === waitFor) reached();
  };
  const until = (target) =>
    new Promise((resolve) => {
      waitFor = target;
      reached = resolve;
      count();
    });
  wss.on('connection', (ws) => {
    accepted++;
    count();
    ws.on('error', () => {});
    // The app listens to messages, in every candidate.
    ws.on('message', () => {
      received++;
      count();
    });
    // The kernel's own: when the period's pongs are all in.
    ws.on('pong', () => {
      pongs++;
      count();
    });
  });
  const candidate = CANDIDATES[name](wss);
  const child = forkWorker(fileURLToPath(import.meta.url), ['--clients'], {
    label: 'ws-period clients',
    execArgv: process.execArgv,
  });
  await child.ready;
  const { opened } = await child.ask('connect', `ws://127.0.0.1:${wss.address().port}`, KERNEL_CONNECTIONS);
  if (opened !== KERNEL_CONNECTIONS) throw new Error(`ws-period kernel: ${opened} of ${KERNEL_CONNECTIONS} opened`);
  await until(opened);

  for (let p = 0; p < WARM_PERIODS + periods; p++) {
    if (scenario === 'mixed') {
      const before = heard();
      const talked = child.ask('talk', TALK_MESSAGES);
      sleepSync(SETTLE_MS);
      const { sent } = await talked;
      await until(before + sent);
    }
    const before = candidate.pings();
    const target = heard();
    candidate.period();
    sleepSync(SETTLE_MS);
    await until(target + candidate.pings() - before);
  }
  // No teardown: the process exits with every connection open, and the client process exits when
  // its IPC channel closes. Closing 1 000 connections is work whose amount depends on how many
  // closes the server read before it exited, and whose functions V8 then optimizes or not: in
  // the count's two runs that differed by tens of millions of instructions (the floor's figure
  // came out below zero).
}

/** The client process: holds the connections; talks on request. */
function clientMain() {
  const sockets = [];
  serveParent({
    /** Opens `count` connections to `url`, one at a time, so that the server's set-up runs the same way in every run. */
    async connect(url, count) {
      for (let i = 0; i < count; i++) {
        const ws = new WebSocket(url);
        ws.on('error', () => {});
        await new Promise((resolve) => {
          ws.once('open', () => resolve(sockets.push(ws)));
          ws.once('close', resolve);
        });
      }
      return { opened: sockets.length };
    },
    /** Every other connection sends `messages` messages. */
    talk(messages) {
      let sent = 0;
      for (let i = 0; i < sockets.length; i += 2) {
        for (let m = 0; m < messages; m++, sent++) sockets[i].send(TALK_MESSAGE);
      }
      return { sent };
    },
  });
}

// Only as the main module: the suite imports this file for its constants, and its own client
// process (suites/ws.mjs --clients) must not become this kernel's client too.
if (isMain(import.meta.url) && process.argv[2] === '--clients') {
  clientMain();
} else if (isMain(import.meta.url)) {
  const [scenario, name, periodsText] = process.argv.slice(2);
  const periods = Number(periodsText);
  if (!['idle', 'mixed'].includes(scenario) || !(name in CANDIDATES) || !(periods >= 0)) {
    console.error(`usage: ws-period-kernel.mjs <idle|mixed> <${Object.keys(CANDIDATES).join('|')}> <periods>`);
    process.exit(2);
  }
  await serverMain(scenario, name, periods);
  process.exit(0);
}

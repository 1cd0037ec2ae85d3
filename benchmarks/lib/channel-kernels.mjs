/**
 * The hot paths that publish on a diagnostics channel, one kernel each, run for N operations
 * under cachegrind by channel-overhead.mjs (issue 18: "with no subscriber the benchmarks move by
 * less than 1%"):
 *
 *   TICKWHEEL_CHANNEL_COPY=<dir> node --expose-gc lib/channel-kernels.mjs <scenario> <candidate> <ops>
 *
 * The packages come from `<dir>` (a copy made by channel-candidates.mjs `compiledOut`: stripped
 * for `compiled-out`, byte for byte the build for the others), so every candidate loads its
 * code from the same kind of place and only the guards differ. `bridge-on` also turns the
 * OpenTelemetry bridge on (channel-candidates.mjs `bridgeOn`) before the warm-up.
 *
 * Every kernel drives a ManualClock wheel of the copy's own core, so no native timer and no
 * event-loop wait is counted, and does per operation exactly what its title says; a fixed
 * warm-up run of the same kernel comes first, so the counted runs find the code optimized.
 * Each operation goes through the publishing site: the wheel's wake-up (`tickwheel:core:wake`),
 * a TimerSet expiry, a fetch timeout or completed request (the request reads its timeout channel
 * to decide whether to capture its context), a gRPC call or deadline, a heartbeat period or kill.
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMain } from './harness.mjs';

export const CHANNEL_KERNEL_CANDIDATES = ['compiled-out', 'no-subscriber', 'bridge-on'];
const noop = () => {};

/** A package of the copy in TICKWHEEL_CHANNEL_COPY. */
function load(name) {
  const dir = process.env.TICKWHEEL_CHANNEL_COPY;
  if (!dir) throw new Error('channel-kernels: TICKWHEEL_CHANNEL_COPY is not set');
  return import(pathToFileURL(path.join(dir, 'node_modules', '@tickwheel', name, 'dist', 'index.js')).href);
}

// ---------------------------------------------------------------------------------------------
// core: wake-ups and TimerSet expiries

/** One op: `perWake` timers scheduled 1 ms out, then one advance(1): one wake-up firing them all. */
async function wakeKernel(perWake) {
  const core = await load('core');
  const clock = new core.ManualClock(0);
  const wheel = new core.TimingWheel({ clock });
  return (ops) => {
    for (let op = 0; op < ops; op++) {
      for (let i = 0; i < perWake; i++) wheel.schedule(1, noop);
      clock.advance(1);
    }
    if (wheel.size !== 0) throw new Error('wake kernel: timers left pending');
  };
}

/** One op: a key set for 1 ms on a TimerSet, then one advance(1): it expires (onExpire runs). */
async function timerSetKernel() {
  const core = await load('core');
  const clock = new core.ManualClock(0);
  const wheel = new core.TimingWheel({ clock });
  let expired = 0;
  const set = new core.TimerSet({ wheel, onExpire: () => expired++ });
  return (ops) => {
    const before = expired;
    for (let op = 0; op < ops; op++) {
      set.set(op & 1023, 1, op);
      clock.advance(1);
    }
    if (expired - before !== ops) throw new Error('timer-set kernel: not every key expired');
  };
}

// ---------------------------------------------------------------------------------------------
// fetch: a completed request, and one that times out

const STUB_URL = 'http://127.0.0.1:1/stub';
const EMPTY_RESPONSE = new Response(null, { status: 204 });

/** Answers at once; like fetch, listens to the signal while in flight. */
function answeringStub(_input, init) {
  const signal = init.signal;
  const onAbort = () => {};
  signal.addEventListener('abort', onAbort);
  return Promise.resolve(EMPTY_RESPONSE).finally(() => signal.removeEventListener('abort', onAbort));
}

/** Never answers: rejects when its signal aborts, as fetch does. */
function stallingStub(_input, init) {
  return new Promise((_resolve, reject) =>
    init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true }),
  );
}

/** One op: one request through withTimeouts(stub, { totalMs }), answered at once. */
async function fetchRequestKernel() {
  const [core, { withTimeouts }] = await Promise.all([load('core'), load('fetch')]);
  const wheel = new core.TimingWheel({ clock: new core.ManualClock(0) });
  const timed = withTimeouts(answeringStub, { totalMs: 30_000, wheel });
  return async (ops) => {
    for (let op = 0; op < ops; op++) await timed(STUB_URL);
  };
}

/** One op: one request to a stub that never answers, timed out by headersMs: 1 (100 per advance). */
async function fetchTimeoutKernel() {
  const [core, { withTimeouts }] = await Promise.all([load('core'), load('fetch')]);
  const clock = new core.ManualClock(0);
  const timed = withTimeouts(stallingStub, { headersMs: 1, retry: 0, wheel: new core.TimingWheel({ clock }) });
  return async (ops) => {
    for (let done = 0; done < ops; done += 100) {
      const pending = [];
      for (let i = 0; i < 100; i++) pending.push(timed(STUB_URL).then(unexpected, noop));
      await Promise.resolve();
      clock.advance(1);
      await Promise.all(pending);
    }
  };
}

function unexpected() {
  throw new Error('channel kernel: a request that should have timed out completed');
}

// ---------------------------------------------------------------------------------------------
// grpc: the client interceptor's call path over a stub next call

const METHOD = { path: '/bench.Bench/Echo', requestStream: false, responseStream: false };

/**
 * A grpc-js next call that answers at once when `answer` (metadata, message, OK on halfClose),
 * or never, ending only with the status it is cancelled with (as grpc-js's call does).
 */
function stubNextCall(grpc, answer) {
  return () => {
    let listener;
    return {
      start(_metadata, l) {
        listener = l;
      },
      sendMessageWithContext(context) {
        context.callback?.();
      },
      sendMessage() {},
      startRead() {},
      halfClose() {
        if (!answer) return;
        const metadata = new grpc.Metadata();
        listener.onReceiveMetadata(metadata);
        listener.onReceiveMessage(METHOD);
        listener.onReceiveStatus({ code: grpc.status.OK, details: 'OK', metadata });
      },
      cancelWithStatus(code, details) {
        listener.onReceiveStatus({ code, details, metadata: new grpc.Metadata() });
      },
      getPeer: () => 'stub',
    };
  };
}

/** `ops` unary calls through `interceptor`; resolves with the status codes seen. */
function grpcCalls(grpc, interceptor, next, ops, onStarted) {
  let ended = 0;
  let okCount = 0;
  const listener = {
    onReceiveMetadata: noop,
    onReceiveMessage: noop,
    onReceiveStatus(status) {
      ended++;
      if (status.code === grpc.status.OK) okCount++;
    },
  };
  const options = { method_definition: METHOD };
  const metadata = new grpc.Metadata();
  for (let op = 0; op < ops; op++) {
    const call = interceptor(options, next);
    call.start(metadata, listener);
    call.sendMessageWithContext({}, METHOD);
    call.halfClose();
    onStarted?.(op);
  }
  return { ended: () => ended, ok: () => okCount };
}

/** One op: one unary call through deadlineInterceptor({ timeoutMs }) answered at once. */
async function grpcCallKernel() {
  const [grpc, core, { deadlineInterceptor }] = await Promise.all([
    import('@grpc/grpc-js'),
    load('core'),
    load('grpc'),
  ]);
  const wheel = new core.TimingWheel({ clock: new core.ManualClock(0) });
  const interceptor = deadlineInterceptor({ timeoutMs: 30_000, wheel });
  const next = stubNextCall(grpc, true);
  return (ops) => {
    const seen = grpcCalls(grpc, interceptor, next, ops);
    if (seen.ok() !== ops) throw new Error('grpc-call kernel: not every call ended OK');
  };
}

/** One op: one unary call that never answers, ended by its 1 ms deadline (100 per advance). */
async function grpcDeadlineKernel() {
  const [grpc, core, { deadlineInterceptor }] = await Promise.all([
    import('@grpc/grpc-js'),
    load('core'),
    load('grpc'),
  ]);
  const clock = new core.ManualClock(0);
  const interceptor = deadlineInterceptor({ timeoutMs: 1, wheel: new core.TimingWheel({ clock }) });
  const next = stubNextCall(grpc, false);
  return (ops) => {
    const seen = grpcCalls(grpc, interceptor, next, ops, (op) => {
      if (op % 100 === 99) clock.advance(1);
    });
    clock.advance(1);
    if (seen.ended() !== ops || seen.ok() !== 0) throw new Error('grpc-deadline kernel: not every call timed out');
  };
}

// ---------------------------------------------------------------------------------------------
// ws: heartbeat periods and kills, on sockets with no I/O

/** A ws WebSocket with no I/O: answers each ping with a pong when `answers`. */
class StubSocket extends EventEmitter {
  readyState = 1;
  constructor(answers) {
    super();
    this.answers = answers;
  }
  ping() {
    if (this.answers) queueMicrotask(() => this.emit('pong'));
  }
  close() {
    this.readyState = 2;
  }
  terminate() {
    this.readyState = 3;
  }
}

/** A ws WebSocketServer with no I/O: `'connection'` events, `clients`, `handleUpgrade`. */
class StubServer extends EventEmitter {
  clients = new Set();
  handleUpgrade() {
    throw new Error('not used');
  }
}

const PERIOD_MS = 100;
const PONG_TIMEOUT_MS = 30;
const HEARTBEAT_CONNECTIONS = 100;

async function heartbeatOn(server) {
  const [core, { heartbeat }] = await Promise.all([load('core'), load('ws')]);
  const clock = new core.ManualClock(0);
  const wheel = new core.TimingWheel({ clock });
  const beat = heartbeat(server, { pingIntervalMs: PERIOD_MS, pongTimeoutMs: PONG_TIMEOUT_MS, pingSlackMs: 0, wheel });
  return { clock, beat };
}

/** One op: one connection's heartbeat period (pinged, answers); 100 connections per period. */
async function wsPeriodKernel() {
  const server = new StubServer();
  const { clock } = await heartbeatOn(server);
  for (let i = 0; i < HEARTBEAT_CONNECTIONS; i++) {
    const socket = new StubSocket(true);
    server.clients.add(socket);
    server.emit('connection', socket);
  }
  return async (ops) => {
    for (let done = 0; done < ops; done += HEARTBEAT_CONNECTIONS) {
      clock.advance(PERIOD_MS);
      await new Promise(setImmediate); // the pongs (microtasks) and any check after the poll
    }
  };
}

/** One op: a connection that never answers: accepted, pinged, terminated at its pong timeout (100 per period). */
async function wsKillKernel() {
  const server = new StubServer();
  const { clock, beat } = await heartbeatOn(server);
  let dead = 0;
  beat.on('dead', () => dead++);
  return async (ops) => {
    const before = dead;
    for (let done = 0; done < ops; done += HEARTBEAT_CONNECTIONS) {
      for (let i = 0; i < HEARTBEAT_CONNECTIONS; i++) server.emit('connection', new StubSocket(false));
      clock.advance(PERIOD_MS);
      clock.advance(PONG_TIMEOUT_MS);
      await new Promise(setImmediate); // a kill is confirmed after the next I/O poll
    }
    if (dead - before !== ops) throw new Error(`ws-kill kernel: ${dead - before} of ${ops} connections killed`);
  };
}

// ---------------------------------------------------------------------------------------------

/**
 * Scenario -> `{ build, warmOps, shortOps, longOps }`: `build()` makes the kernel, a function of
 * `ops` (sync or async); the op counts are those of the warm-up and of the two counted runs
 * (multiples of 100, which the batched kernels need), sized so a run under valgrind takes seconds.
 */
export const CHANNEL_KERNELS = {
  'wake-1': { build: () => wakeKernel(1), warmOps: 10_000, shortOps: 10_000, longOps: 50_000 },
  'wake-100': { build: () => wakeKernel(100), warmOps: 500, shortOps: 500, longOps: 2_500 },
  'timer-set-expiry': { build: timerSetKernel, warmOps: 10_000, shortOps: 10_000, longOps: 50_000 },
  'fetch-request': { build: fetchRequestKernel, warmOps: 2_500, shortOps: 2_500, longOps: 12_500 },
  'fetch-timeout': { build: fetchTimeoutKernel, warmOps: 2_000, shortOps: 2_000, longOps: 10_000 },
  'grpc-call': { build: grpcCallKernel, warmOps: 5_000, shortOps: 5_000, longOps: 25_000 },
  'grpc-deadline': { build: grpcDeadlineKernel, warmOps: 5_000, shortOps: 5_000, longOps: 25_000 },
  'ws-period': { build: wsPeriodKernel, warmOps: 5_000, shortOps: 5_000, longOps: 25_000 },
  'ws-kill': { build: wsKillKernel, warmOps: 2_000, shortOps: 2_000, longOps: 10_000 },
};

if (isMain(import.meta.url)) {
  const [scenario, candidate, opsText] = process.argv.slice(2);
  const ops = Number(opsText);
  if (!(scenario in CHANNEL_KERNELS) || !CHANNEL_KERNEL_CANDIDATES.includes(candidate) || !(ops >= 0)) {
    console.error(
      `usage: channel-kernels.mjs <${Object.keys(CHANNEL_KERNELS).join('|')}> <${CHANNEL_KERNEL_CANDIDATES.join('|')}> <ops>`,
    );
    process.exit(2);
  }
  if (candidate === 'bridge-on') (await import('./channel-candidates.mjs')).bridgeOn();
  const spec = CHANNEL_KERNELS[scenario];
  const kernel = await spec.build();
  await kernel(spec.warmOps);
  await kernel(ops);
  process.exit(0);
}

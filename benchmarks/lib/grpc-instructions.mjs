/**
 * Instructions per real unary call in a traced process (issue 28's "free in a traced process"),
 * counted by cachegrind as the core suite counts (lib/cachegrind.mjs): long run minus short run,
 * divided by the difference in calls. Client and server share the counted process, so the figure
 * is both sides of each call, over loopback HTTP/2, as in the suite's throughput rows.
 *
 * Both candidates run in a process that has entered an AsyncLocalStorage (`tracer` below) before
 * anything else, as every service traced by OpenTelemetry's context manager has; each call is
 * made inside a `tracer.run()` of its own, as a traced client makes it inside its span:
 * - `bare-als`: bare grpc-js, every call with `{ deadline: Date.now() + 60 s }`; the process never
 *   loads @tickwheel/grpc;
 * - `tickwheel`: `deadlineInterceptor({ timeoutMs: 60 s })` on the client and
 *   `serverDeadlineInterceptor()` on the server, no call options;
 * - `floor-als`: the floor under any interceptor pair that gives handlers an ambient deadline of
 *   its own: bare-als's calls, through interceptors that do nothing (`(options, next) =>
 *   next(options)` on the client, `(method, call) => call` on the server), in a process where a
 *   second AsyncLocalStorage is switched on, as tickwheel's ambient store is. What it costs above
 *   bare-als is grpc-js's price of having interceptors at all plus Node's price of a second store
 *   (on Node 20 and 22 every async resource carries each enabled store); lib/grpc-ablation.mjs
 *   counts the two apart.
 *
 * Calls are made one at a time, as the fetch suite's requests are: with calls in flight, how many
 * of them one socket read or write carries depends on timing, which valgrind and the machine's
 * load change from run to run, and so does the count (it moved by 15% between runs with 32 in
 * flight). Messages are raw bytes. The limit is 10 minutes, which no call under valgrind reaches.
 *
 *   node lib/grpc-instructions.mjs [shortN] [longN]   # prints the counts for this Node
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { instructionsPerOp, isMain, valgrindAvailable } from './harness.mjs';

const SELF = fileURLToPath(import.meta.url);
/**
 * Calls before the counted ones: JIT, HTTP/2 windows, the young generation's working size. After
 * 1,000 calls TurboFan was still compiling grpc-js and http2 (about 125 compiles between calls
 * 1,200 and 4,000), and those compiles made up most of a 200-to-1,000-call window's count; from
 * 4,000 on about 10 compiles fall in a 1,500-call window. GRPC_WARMUP overrides it.
 */
export const WARMUP = Number(process.env.GRPC_WARMUP ?? 4_000);
const DEADLINE_MS = 600_000;

export const GRPC_INSTRUCTION_CANDIDATES = ['bare-als', 'floor-als', 'tickwheel'];

/** The tracer's storage: entered before grpc-js loads, and around every call. */
export const tracer = new AsyncLocalStorage();

const identity = (value) => value;
/** The echo service both the suite and this count serve: raw bytes in, the same bytes out. */
export const ECHO_SERVICE = {
  Echo: {
    path: '/bench.Bench/Echo',
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

/** A server and a connected client of `candidate`, and `call()` making one unary call. */
export async function tracedPair(grpc, candidate) {
  const service = ECHO_SERVICE;
  const tickwheel =
    candidate === 'tickwheel' ? await import(process.env.GRPC_INSTRUCTIONS_PACKAGE ?? '@tickwheel/grpc') : undefined;
  const floor = candidate === 'floor-als';
  // Switched on as tickwheel's is (core's enableAmbientDeadlines): a run() of nothing.
  if (floor) new AsyncLocalStorage().run(null, () => undefined);
  const server = new grpc.Server({
    interceptors: tickwheel ? [tickwheel.serverDeadlineInterceptor()] : floor ? [(method, call) => call] : [],
  });
  server.addService(service, {
    Echo(call, callback) {
      callback(null, call.request);
    },
  });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const Client = grpc.makeGenericClientConstructor(service, 'Bench');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    interceptors: tickwheel
      ? [tickwheel.deadlineInterceptor({ timeoutMs: DEADLINE_MS })]
      : floor
        ? [(options, next) => next(options)]
        : [],
  });
  await new Promise((resolve, reject) =>
    client.waitForReady(Date.now() + 120_000, (err) => (err ? reject(err) : resolve())),
  );
  const payload = Buffer.alloc(32, 7);
  const options = tickwheel ? () => ({}) : () => ({ deadline: Date.now() + DEADLINE_MS });
  const send = (resolve, reject) => client.Echo(payload, options(), (err, res) => (err ? reject(err) : resolve(res)));
  return {
    call: () => tracer.run({ span: 1 }, () => new Promise(send)),
    close() {
      client.close();
      server.forceShutdown();
    },
  };
}

/** `ops` calls, one at a time. */
async function calls(pair, ops) {
  for (let i = 0; i < ops; i++) await pair.call();
}

/** The kernel: WARMUP calls, then `ops` more. */
async function kernel(candidate, ops) {
  tracer.enterWith({ span: 0 });
  const grpc = await import('@grpc/grpc-js');
  const pair = await tracedPair(grpc, candidate);
  await calls(pair, WARMUP);
  await calls(pair, ops);
  pair.close();
  process.exit(0);
}

/**
 * Instructions per call of each candidate under `node`: `instructionsPerOp`, long run minus short run.
 * @returns `{ [candidate]: { median, samples: [perCall] } }`, or undefined without valgrind
 */
export function grpcInstructions(
  node = process.execPath,
  shortN = 500,
  longN = 2_000,
  candidates = GRPC_INSTRUCTION_CANDIDATES,
) {
  if (!valgrindAvailable()) return undefined;
  const results = {};
  for (const candidate of candidates) {
    const count = instructionsPerOp(node, 'call', candidate, { shortOps: shortN, longOps: longN }, { kernel: SELF });
    const perCall = Math.round(count.perOp);
    results[candidate] = { median: perCall, samples: [perCall] };
  }
  return results;
}

if (isMain(import.meta.url) && process.argv[2] === 'call') {
  await kernel(process.argv[3], Number(process.argv[4]));
} else if (isMain(import.meta.url)) {
  const candidates = process.argv[4]?.split(',') ?? GRPC_INSTRUCTION_CANDIDATES;
  const results = grpcInstructions(
    process.execPath,
    Number(process.argv[2] ?? 500),
    Number(process.argv[3] ?? 2_000),
    candidates,
  );
  console.log(JSON.stringify({ node: process.version, results }));
}

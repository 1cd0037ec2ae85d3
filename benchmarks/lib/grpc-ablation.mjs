/**
 * Where the instructions of a traced unary call go (issue 28's "free in a traced process"): the
 * same count as lib/grpc-instructions.mjs (cachegrind, long run minus short run, client and
 * server in the counted process, one call at a time inside its own `tracer.run()`), for variants
 * that add one piece of the interceptors' work at a time to bare grpc-js:
 *
 * | variant | client | server |
 * |---|---|---|
 * | `bare-als` | `deadline` option | none |
 * | `bare-als2` | as bare-als, with a second AsyncLocalStorage switched on (tickwheel's ambient store is one) | none |
 * | `noop` | `(options, next) => next(options)`, `deadline` option | `(method, call) => call` |
 * | `wrap-noop` | `new InterceptingCall(next(options))`, `deadline` option | `new ServerInterceptingCall(call)` |
 * | `client-only` | `deadlineInterceptor` | none |
 * | `server-only` | `deadline` option | `serverDeadlineInterceptor` |
 * | `tickwheel` | `deadlineInterceptor` | `serverDeadlineInterceptor` |
 *
 * `noop` is what grpc-js charges for having an interceptor at all; `wrap-noop` is the no-op
 * grpc-js's documentation shows, with the requester and listener objects it builds per call.
 *
 *   node --expose-gc suites/grpc.mjs --ablation [shortN] [longN] [variant,...]   # prints the counts for this Node
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { instructionsPerOp, isMain } from './harness.mjs';
import { ECHO_SERVICE, tracer, WARMUP } from './grpc-instructions.mjs';

const SELF = fileURLToPath(import.meta.url);
const DEADLINE_MS = 600_000;
const GC_EVERY = 25;
export const GRPC_ABLATION_VARIANTS = [
  'bare-als',
  'bare-als2',
  'noop',
  'wrap-noop',
  'client-only',
  'server-only',
  'tickwheel',
];

/** The client and server interceptors of `variant`, and whether its calls carry `deadline`. */
async function sides(grpc, variant) {
  const ours = () => import(process.env.GRPC_INSTRUCTIONS_PACKAGE ?? '@tickwheel/grpc');
  switch (variant) {
    case 'bare-als':
      return { client: [], server: [], deadline: true };
    case 'bare-als2': {
      const second = new AsyncLocalStorage();
      second.run(null, () => {});
      return { client: [], server: [], deadline: true };
    }
    case 'noop':
      return { client: [(options, next) => next(options)], server: [(method, call) => call], deadline: true };
    case 'wrap-noop':
      return {
        client: [(options, next) => new grpc.InterceptingCall(next(options))],
        server: [(method, call) => new grpc.ServerInterceptingCall(call)],
        deadline: true,
      };
    case 'client-only':
      return { client: [(await ours()).deadlineInterceptor({ timeoutMs: DEADLINE_MS })], server: [], deadline: false };
    case 'server-only':
      return { client: [], server: [(await ours()).serverDeadlineInterceptor()], deadline: true };
    case 'tickwheel': {
      const t = await ours();
      return {
        client: [t.deadlineInterceptor({ timeoutMs: DEADLINE_MS })],
        server: [t.serverDeadlineInterceptor()],
        deadline: false,
      };
    }
    default:
      throw new Error(`unknown variant ${variant}`);
  }
}

async function kernel(variant, ops) {
  tracer.enterWith({ span: 0 });
  const grpc = await import('@grpc/grpc-js');
  const { client: clientInterceptors, server: serverInterceptors, deadline } = await sides(grpc, variant);
  const server = new grpc.Server({ interceptors: serverInterceptors });
  server.addService(ECHO_SERVICE, {
    Echo(call, callback) {
      callback(null, call.request);
    },
  });
  const port = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const Client = grpc.makeGenericClientConstructor(ECHO_SERVICE, 'Bench');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    interceptors: clientInterceptors,
  });
  await new Promise((resolve, reject) =>
    client.waitForReady(Date.now() + 120_000, (err) => (err ? reject(err) : resolve())),
  );
  const payload = Buffer.alloc(32, 7);
  const options = deadline ? () => ({ deadline: Date.now() + DEADLINE_MS }) : () => ({});
  const send = (resolve, reject) => client.Echo(payload, options(), (err, res) => (err ? reject(err) : resolve(res)));
  const call = () => tracer.run({ span: 1 }, () => new Promise(send));
  // A minor GC every GC_EVERY calls: young-generation collections then fall at the same points in
  // the short and the long run whatever each variant allocates, so a difference of a few hundred
  // calls does not hinge on whether one more scavenge fell inside it.
  for (let i = 0; i < WARMUP + ops; i++) {
    await call();
    if (i % GC_EVERY === 0) globalThis.gc({ type: 'minor' });
  }
  client.close();
  server.forceShutdown();
  process.exit(0);
}

if (isMain(import.meta.url) && process.argv[2] === 'call') {
  await kernel(process.argv[3], Number(process.argv[4]));
}

/** Counts each of `variants` and prints one JSON line per count. */
export function grpcAblation(shortN = 500, longN = 2_000, variants = GRPC_ABLATION_VARIANTS) {
  for (const variant of variants) {
    const count = instructionsPerOp(
      process.execPath,
      'call',
      variant,
      { shortOps: shortN, longOps: longN },
      { kernel: SELF },
    );
    console.log(
      JSON.stringify({
        node: process.version,
        variant,
        pkg: process.env.GRPC_INSTRUCTIONS_PACKAGE ?? '@tickwheel/grpc',
        perCall: Math.round(count.perOp),
      }),
    );
  }
}

/**
 * Ablation of the wrapper's instructions per request (issue 26): the steps between bare fetch and
 * withTimeouts, each counted as lib/fetch-instructions.mjs counts (cachegrind, long run minus short run,
 * after the same warm-up), so that the difference between two rows is what one step costs.
 *
 * As there, the old generation is sized so that no mark-compact lands in a run; ABLATION_FULL_GC=1
 * counts with node's default heap instead (mark-compacts included, as they fall).
 *
 *   node --expose-gc suites/fetch.mjs --ablation [variant,...] [shortN] [longN]
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { LIMIT_MS, NODE_FLAGS as COUNT_FLAGS, startServer, WARMUP } from './fetch-instructions.mjs';
import { instructionsPerOp, isMain } from './harness.mjs';

const SELF = fileURLToPath(import.meta.url);
const require = createRequire(import.meta.url);
/** The fetch suite's count's flags, or node's default heap with ABLATION_FULL_GC=1. */
const NODE_FLAGS = process.env.ABLATION_FULL_GC === '1' ? [] : COUNT_FLAGS;
const LEGACY = Symbol.for('undici.globalDispatcher.1');
const CURRENT = Symbol.for('undici.globalDispatcher.2');

/** A TransportTap observer that does nothing, for the rows that count the tap alone. */
const IDLE_OBSERVER = {
  transportConnected() {},
  transportData() {},
  transportPaused() {},
  transportResumed() {},
  transportEnded() {},
};

/** What each variant sends; `global` is the dispatcher fetch would use. */
const VARIANTS = {
  bare: () => (url) => fetch(url),
  'AbortSignal.timeout': () => (url) => fetch(url, { signal: AbortSignal.timeout(LIMIT_MS) }),
  'controller signal': () => (url) => fetch(url, { signal: new AbortController().signal }),
  'global dispatcher in init': (global) => (url) => fetch(url, { dispatcher: global }),
  'pass-through dispatcher': (global) => {
    const through = { dispatch: (options, handler) => global.dispatch(options, handler) };
    return (url) => fetch(url, { dispatcher: through });
  },
  'pass-through + lift': (global) => {
    const through = {
      dispatch: (options, handler) => {
        options.headersTimeout = 0;
        options.bodyTimeout = 0;
        return global.dispatch(options, handler);
      },
    };
    return (url) => fetch(url, { dispatcher: through });
  },
  'pass-through + handler wrap': (global) => {
    const { CallbackHandler, ControllerHandler } = require('../../packages/fetch/dist/tap-handlers.js');
    const tap = { connect() {}, data() {}, pause() {}, resume() {}, end() {} };
    const through = {
      dispatch: (options, handler) =>
        global.dispatch(
          options,
          typeof handler.onResponseStart === 'function'
            ? new ControllerHandler(handler, tap, 1)
            : new CallbackHandler(handler, tap, 1),
        ),
    };
    return (url) => fetch(url, { dispatcher: through });
  },
  'pass-through + lift + handler wrap': (global) => {
    const { CallbackHandler, ControllerHandler } = require('../../packages/fetch/dist/tap-handlers.js');
    const tap = { connect() {}, data() {}, pause() {}, resume() {}, end() {} };
    const through = {
      dispatch: (options, handler) => {
        options.headersTimeout = 0;
        options.bodyTimeout = 0;
        return global.dispatch(
          options,
          typeof handler.onResponseStart === 'function'
            ? new ControllerHandler(handler, tap, 1)
            : new CallbackHandler(handler, tap, 1),
        );
      },
    };
    return (url) => fetch(url, { dispatcher: through });
  },
  // The wrapper's own TransportTap (a fresh one per request, as per attempt), with an observer that does nothing.
  'TransportTap per request': () => {
    const { TransportTap } = require('../../packages/fetch/dist/transport-tap.js');
    return (url) => fetch(url, { dispatcher: new TransportTap(undefined, IDLE_OBSERVER, 3) });
  },
  'TransportTap + controller signal': () => {
    const { TransportTap } = require('../../packages/fetch/dist/transport-tap.js');
    return (url) =>
      fetch(url, { signal: new AbortController().signal, dispatcher: new TransportTap(undefined, IDLE_OBSERVER, 3) });
  },
  'controller + pass-through': (global) => {
    const through = { dispatch: (options, handler) => global.dispatch(options, handler) };
    return (url) => fetch(url, { signal: new AbortController().signal, dispatcher: through });
  },
  // The "around" rows time nothing themselves: each runs code before the request and after its
  // body, through the same async wrapper, so that the difference to 'bare + around' is that code.
  'bare + around': () =>
    around(
      () => undefined,
      () => {},
    ),
  'bare + setTimeout/clearTimeout': () =>
    around(
      () => setTimeout(noop, LIMIT_MS).unref(),
      (timer) => clearTimeout(timer),
    ),
  'bare + AbortSignal.timeout unused': () =>
    around(
      () => AbortSignal.timeout(LIMIT_MS),
      () => {},
    ),
  'bare + AbortController unused': () =>
    around(
      () => new AbortController(),
      () => {},
    ),
  'bare + wheel schedule/cancel': () => {
    const { sharedWheel, freshNow } = require('../../packages/core/dist/index.js');
    const wheel = sharedWheel();
    return around(
      () => wheel.scheduleAt(freshNow(wheel.clock) + LIMIT_MS, noop).unref(),
      (handle) => handle.cancel(),
    );
  },
  'bare + wheel schedule/cancel kept armed': () => {
    const { sharedWheel, freshNow } = require('../../packages/core/dist/index.js');
    const wheel = sharedWheel();
    keepArmed(wheel);
    return around(
      () => wheel.scheduleAt(freshNow(wheel.clock) + LIMIT_MS, noop).unref(),
      (handle) => handle.cancel(),
    );
  },
  // As the wrapper drives its one handle: armed at the start, re-pointed when the body starts and
  // on its first chunk (both later: the lazy path), cancelled at the end.
  'bare + wheel schedule/2 refreshAt/cancel': () => {
    const { sharedWheel, freshNow } = require('../../packages/core/dist/index.js');
    const wheel = sharedWheel();
    return around(
      () => wheel.scheduleAt(freshNow(wheel.clock) + LIMIT_MS, noop).unref(),
      (handle) => {
        handle.refreshAt(wheel.clock.now() + LIMIT_MS);
        handle.refreshAt(wheel.clock.now() + LIMIT_MS);
        handle.cancel();
      },
    );
  },
  'bare + wheel handle': () => {
    const { sharedWheel, freshNow } = require('../../packages/core/dist/index.js');
    const wheel = sharedWheel();
    const noop = () => {};
    return async (url) => {
      const handle = wheel.scheduleAt(freshNow(wheel.clock) + LIMIT_MS, noop).unref();
      const response = await fetch(url);
      return { text: () => response.text().then((text) => (handle.cancel(), text)) };
    };
  },
  'wrapper totalMs': () => wrapped({ totalMs: LIMIT_MS }),
  'wrapper headersMs': () => wrapped({ headersMs: LIMIT_MS }),
  'wrapper bodyIdleMs': () => wrapped({ bodyIdleMs: LIMIT_MS }),
  'wrapper three limits': () => wrapped({ headersMs: LIMIT_MS, bodyIdleMs: LIMIT_MS, totalMs: LIMIT_MS }),
  'wrapper three limits kept armed': () => {
    const { sharedWheel } = require('../../packages/core/dist/index.js');
    keepArmed(sharedWheel());
    return wrapped({ headersMs: LIMIT_MS, bodyIdleMs: LIMIT_MS, totalMs: LIMIT_MS });
  },
  'wrapper three + connectMs': () =>
    wrapped({ connectMs: LIMIT_MS, headersMs: LIMIT_MS, bodyIdleMs: LIMIT_MS, totalMs: LIMIT_MS }),
};

function noop() {}

/** Runs `before()` ahead of each request and `after(what before returned)` once its body is read. */
function around(before, after) {
  return async (url) => {
    const held = before();
    const response = await fetch(url);
    return { text: () => response.text().then((text) => (after(held), text)) };
  };
}

/**
 * One unref'ed handle due after every run, so the wheel never empties: its native timer stays
 * armed, and no request pays the setTimeout and clearTimeout that an emptied wheel costs.
 */
function keepArmed(wheel) {
  wheel.schedule(LIMIT_MS * 2, noop).unref();
}

function wrapped(options) {
  const { withTimeouts } = require('../../packages/fetch/dist/index.js');
  const timed = withTimeouts(fetch, options);
  return (url) => timed(url);
}

async function kernel(variant, ops) {
  const url = process.env.FETCH_INSTRUCTIONS_URL;
  await (await fetch(url)).text();
  const global = globalThis[CURRENT] ?? globalThis[LEGACY];
  const request = VARIANTS[variant](global);
  for (let i = 0; i < WARMUP + ops; i++) await (await request(url)).text();
  process.exit(0);
}

if (isMain(import.meta.url) && process.argv[2] === 'request') {
  await kernel(process.argv[3], Number(process.argv[4]));
}

/** Counts each of `names` (default every variant) and prints `node, variant, instructions per request` lines. */
export async function fetchAblation(names = Object.keys(VARIANTS), shortN = 1_000, longN = 3_000) {
  const server = await startServer();
  const env = { ...process.env, FETCH_INSTRUCTIONS_URL: server.url };
  try {
    for (const name of names) {
      const count = instructionsPerOp(
        process.execPath,
        'request',
        name,
        { shortOps: shortN, longOps: longN },
        { kernel: SELF, env, nodeFlags: NODE_FLAGS },
      );
      console.log(`${process.version}\t${name}\t${Math.round(count.perOp)}`);
    }
  } finally {
    await server.stop();
  }
}

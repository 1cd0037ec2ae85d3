/**
 * The core suite's candidates, one function per candidate and scenario, shared by the wall-clock
 * runs (suites/core.mjs) and the instruction counts under cachegrind (instruction-kernel.mjs):
 *
 * - `tickwheel`: @tickwheel/core's TimingWheel, from dist;
 * - `native`: one `setTimeout` per timer (`clearTimeout`, `timeout.refresh()`);
 * - `heap`: an indexed binary-heap timer queue with one native timer (heap-timer-queue.mjs);
 * - `timer-wheel`: the `timer-wheel` npm package (1 s resolution, driven by the caller);
 * - `retimer`: the `retimer` npm package (v4): one native timer per timer, a lazy `reschedule()`;
 * - `undici`: undici's fast timers (`undici/lib/util/timers.js`, from the undici devDependency
 *   of @tickwheel/fetch): `setFastTimeout`, one array of timers swept by a 499 ms native tick
 *   (1 s resolution), refresh a flag write, clear a flag write swept on the next tick;
 * - `floor`: an intrusive doubly-linked list and nothing else (floor-list.mjs), the cost no
 *   timer can go below.
 *
 * Each candidate has its own loop so that no call site is shared (and made polymorphic) between
 * candidates.
 */
import { createRequire } from 'node:module';
import { TimingWheel } from '@tickwheel/core';
import retimer from 'retimer';
import timerWheelPackage from 'timer-wheel';
import { FloorList } from './floor-list.mjs';
import { gc, heapAfterGc, sleepSync } from './harness.mjs';
import { HeapTimerQueue } from './heap-timer-queue.mjs';

const { TimerWheel: NpmTimerWheel, ActionTimerWheel } = timerWheelPackage;

// undici's fast timers are not in its exports map: loaded by path from the undici that
// @tickwheel/fetch tests against (its devDependency), as undici's own client loads them.
const undiciRequire = createRequire(new URL('../../packages/fetch/package.json', import.meta.url));
/** undici's `lib/util/timers.js`: `setFastTimeout(callback, delay)`, `clearFastTimeout(timer)`, `timer.refresh()`. */
export const undiciTimers = undiciRequire(
  undiciRequire.resolve('undici/package.json').replace(/package\.json$/, 'lib/util/timers.js'),
);
const { setFastTimeout, clearFastTimeout } = undiciTimers;

/**
 * Waits for `promise` with a ref'ed handle open: undici unref()s its sweep timer (its sockets
 * keep a client's process alive), so a run of fast timers alone would let the process exit.
 */
export async function keptAlive(promise) {
  const handle = setInterval(noop, 1000);
  try {
    return await promise;
  } finally {
    clearInterval(handle);
  }
}

/** timer-wheel's natural resolution: its finest layer's buckets are 1,024 ms wide. */
export const TIMER_WHEEL_RESOLUTION_MS = 1024;

export const noop = () => {};

/** The timers a user would use instead of the wheel: the root README's rows (`peers` of a scenario). */
export const CORE_PEERS = {
  native: 'native setTimeout',
  retimer: 'retimer 4',
  undici: "undici's fast timers",
  'timer-wheel': 'timer-wheel 1',
};

// ---------------------------------------------------------------------------------------------
// Rolling RPC pattern: K timers in flight; each op cancels the oldest and schedules a new one.
// Timers are 5..56 s out, so none fires while measured.

export function durationsFor(distinct) {
  const durations = new Float64Array(distinct);
  for (let j = 0; j < distinct; j++) durations[j] = distinct === 1 ? 30_000 : 5_000 + j * 200;
  return durations;
}

export const rolling = {
  tickwheel(k, ops, durations) {
    const wheel = new TimingWheel();
    const ring = new Array(k);
    const d = durations.length - 1;
    for (let i = 0; i < k; i++) ring[i] = wheel.schedule(durations[i & d], noop);
    const t0 = performance.now();
    for (let op = 0, i = 0; op < ops; op++) {
      ring[i].cancel();
      ring[i] = wheel.schedule(durations[op & d], noop);
      if (++i === k) i = 0;
    }
    const elapsed = performance.now() - t0;
    wheel.close();
    return (ops / elapsed) * 1000;
  },
  native(k, ops, durations) {
    const ring = new Array(k);
    const d = durations.length - 1;
    for (let i = 0; i < k; i++) ring[i] = setTimeout(noop, durations[i & d]);
    const t0 = performance.now();
    for (let op = 0, i = 0; op < ops; op++) {
      clearTimeout(ring[i]);
      ring[i] = setTimeout(noop, durations[op & d]);
      if (++i === k) i = 0;
    }
    const elapsed = performance.now() - t0;
    for (let i = 0; i < k; i++) clearTimeout(ring[i]);
    return (ops / elapsed) * 1000;
  },
  heap(k, ops, durations) {
    const queue = new HeapTimerQueue();
    const ring = new Array(k);
    const d = durations.length - 1;
    for (let i = 0; i < k; i++) ring[i] = queue.schedule(durations[i & d], noop);
    const t0 = performance.now();
    for (let op = 0, i = 0; op < ops; op++) {
      ring[i].cancel();
      ring[i] = queue.schedule(durations[op & d], noop);
      if (++i === k) i = 0;
    }
    const elapsed = performance.now() - t0;
    queue.close();
    return (ops / elapsed) * 1000;
  },
  'timer-wheel'(k, ops, durations) {
    const wheel = new NpmTimerWheel();
    const ring = new Array(k);
    const d = durations.length - 1;
    for (let i = 0; i < k; i++) ring[i] = wheel.schedule(noop, durations[i & d]);
    const t0 = performance.now();
    for (let op = 0, i = 0; op < ops; op++) {
      ring[i].remove();
      ring[i] = wheel.schedule(noop, durations[op & d]);
      if (++i === k) i = 0;
    }
    return (ops / (performance.now() - t0)) * 1000;
  },
  retimer(k, ops, durations) {
    const ring = new Array(k);
    const d = durations.length - 1;
    for (let i = 0; i < k; i++) ring[i] = retimer(noop, durations[i & d]);
    const t0 = performance.now();
    for (let op = 0, i = 0; op < ops; op++) {
      ring[i].clear();
      ring[i] = retimer(noop, durations[op & d]);
      if (++i === k) i = 0;
    }
    const elapsed = performance.now() - t0;
    for (let i = 0; i < k; i++) ring[i].clear();
    return (ops / elapsed) * 1000;
  },
  undici(k, ops, durations) {
    const ring = new Array(k);
    const d = durations.length - 1;
    for (let i = 0; i < k; i++) ring[i] = setFastTimeout(noop, durations[i & d]);
    const t0 = performance.now();
    for (let op = 0, i = 0; op < ops; op++) {
      clearFastTimeout(ring[i]);
      ring[i] = setFastTimeout(noop, durations[op & d]);
      if (++i === k) i = 0;
    }
    const elapsed = performance.now() - t0;
    for (let i = 0; i < k; i++) clearFastTimeout(ring[i]);
    return (ops / elapsed) * 1000;
  },
  // No durations: the floor has no notion of time.
  floor(k, ops) {
    const list = new FloorList();
    const ring = new Array(k);
    for (let i = 0; i < k; i++) ring[i] = list.push(noop);
    const t0 = performance.now();
    for (let op = 0, i = 0; op < ops; op++) {
      list.unlink(ring[i]);
      ring[i] = list.push(noop);
      if (++i === k) i = 0;
    }
    return (ops / (performance.now() - t0)) * 1000;
  },
};

// ---------------------------------------------------------------------------------------------
// Refresh-heavy idle detection: every simulated message refreshes its connection's idle timer.

export const CONNECTIONS = 100_000;
export const MESSAGES = 2_000_000;
export const IDLE_MS = 30_000;

/** `count` connection indices in a fixed pseudo-random order (xorshift32), the same in every run. */
export function messageOrder(count = MESSAGES) {
  let seed = 0x2545f491;
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    order[i] = (seed >>> 0) % CONNECTIONS;
  }
  return order;
}

/**
 * A refresh allocates nothing, so any garbage collection inside the timed loop is left over from
 * setting up the timers: each candidate collects before its loop. Without that, a collection that
 * landed in one of the two runs cachegrind compares (long minus short) but not in the other read
 * as ~170 extra instructions per refresh: Node 26 counted 169, 458 and 146 per op over 200k-600k,
 * 600k-1M and 1M-1.4M ops; with the collection, 169, 171 and 168. Node 24's 349 in earlier
 * results was the same artifact: 214, 216 and 214 with it.
 */
export const refreshing = {
  tickwheel(order) {
    const wheel = new TimingWheel();
    const handles = new Array(CONNECTIONS);
    for (let c = 0; c < CONNECTIONS; c++) handles[c] = wheel.schedule(IDLE_MS, noop);
    gc(); // see the comment above `refreshing`
    const t0 = performance.now();
    for (let m = 0; m < order.length; m++) handles[order[m]].refresh();
    const elapsed = performance.now() - t0;
    wheel.close();
    return (order.length / elapsed) * 1000;
  },
  native(order) {
    const handles = new Array(CONNECTIONS);
    for (let c = 0; c < CONNECTIONS; c++) handles[c] = setTimeout(noop, IDLE_MS);
    gc(); // see the comment above `refreshing`
    const t0 = performance.now();
    for (let m = 0; m < order.length; m++) handles[order[m]].refresh();
    const elapsed = performance.now() - t0;
    for (let c = 0; c < CONNECTIONS; c++) clearTimeout(handles[c]);
    return (order.length / elapsed) * 1000;
  },
  heap(order) {
    const queue = new HeapTimerQueue();
    const handles = new Array(CONNECTIONS);
    for (let c = 0; c < CONNECTIONS; c++) handles[c] = queue.schedule(IDLE_MS, noop);
    gc(); // see the comment above `refreshing`
    const t0 = performance.now();
    for (let m = 0; m < order.length; m++) handles[order[m]].refresh();
    const elapsed = performance.now() - t0;
    queue.close();
    return (order.length / elapsed) * 1000;
  },
  'timer-wheel'(order) {
    // Its rescheduling path: remove the old entry, schedule a new one.
    const wheel = new NpmTimerWheel();
    const handles = new Array(CONNECTIONS);
    for (let c = 0; c < CONNECTIONS; c++) handles[c] = wheel.schedule(noop, IDLE_MS);
    gc(); // see the comment above `refreshing`
    const t0 = performance.now();
    for (let m = 0; m < order.length; m++) {
      const c = order[m];
      handles[c].remove();
      handles[c] = wheel.schedule(noop, IDLE_MS);
    }
    return (order.length / (performance.now() - t0)) * 1000;
  },
  retimer(order) {
    const handles = new Array(CONNECTIONS);
    for (let c = 0; c < CONNECTIONS; c++) handles[c] = retimer(noop, IDLE_MS);
    gc(); // see the comment above `refreshing`
    const t0 = performance.now();
    for (let m = 0; m < order.length; m++) handles[order[m]].reschedule(IDLE_MS);
    const elapsed = performance.now() - t0;
    for (let c = 0; c < CONNECTIONS; c++) handles[c].clear();
    return (order.length / elapsed) * 1000;
  },
  undici(order) {
    const handles = new Array(CONNECTIONS);
    for (let c = 0; c < CONNECTIONS; c++) handles[c] = setFastTimeout(noop, IDLE_MS);
    gc(); // see the comment above `refreshing`
    const t0 = performance.now();
    for (let m = 0; m < order.length; m++) handles[order[m]].refresh();
    const elapsed = performance.now() - t0;
    for (let c = 0; c < CONNECTIONS; c++) clearFastTimeout(handles[c]);
    return (order.length / elapsed) * 1000;
  },
  floor(order) {
    // One duration: refresh moves the node to the tail, so the list stays in expiry order.
    const list = new FloorList();
    const handles = new Array(CONNECTIONS);
    for (let c = 0; c < CONNECTIONS; c++) handles[c] = list.push(noop);
    gc(); // see the comment above `refreshing`
    const t0 = performance.now();
    for (let m = 0; m < order.length; m++) list.moveToTail(handles[order[m]]);
    return (order.length / (performance.now() - t0)) * 1000;
  },
};

// ---------------------------------------------------------------------------------------------
// Expiry: `count` timers due evenly over one second all fire. Measured: the process's CPU time
// (user + system) from the first schedule to the last callback, i.e. what firing them costs.

export const EXPIRY_TIMERS = 1_000_000;

function expiryDelay(i, count) {
  return 1 + Math.floor((i * 1000) / count);
}

/**
 * Schedules with `scheduleAll` and resolves once every timer has fired. With `overdue`, the
 * thread then sleeps past the last due time before the loop runs, so that every timer is fired
 * in one pass whatever the machine's load: how many wake-ups share the timers otherwise depends
 * on how fast the process runs, and so does an instruction count of it.
 */
function fireAll(count, scheduleAll, overdue = false) {
  return new Promise((resolve) => {
    let fired = 0;
    let cpu0;
    const onFire = () => {
      if (++fired === count) {
        const cpu = process.cpuUsage(cpu0);
        resolve((cpu.user + cpu.system) / 1000);
      }
    };
    cpu0 = process.cpuUsage();
    scheduleAll(onFire);
    if (overdue) sleepSync(1_100);
  });
}

/** The expiry candidates for `count` timers, each resolving to the CPU ms it took. */
export function expiring(count = EXPIRY_TIMERS, overdue = false) {
  return {
    tickwheel: async () => {
      const wheel = new TimingWheel();
      const ms = await fireAll(
        count,
        (onFire) => {
          for (let i = 0; i < count; i++) wheel.schedule(expiryDelay(i, count), onFire);
        },
        overdue,
      );
      wheel.close();
      return ms;
    },
    native: () =>
      fireAll(
        count,
        (onFire) => {
          for (let i = 0; i < count; i++) setTimeout(onFire, expiryDelay(i, count));
        },
        overdue,
      ),
    heap: () =>
      fireAll(count, (onFire) => {
        const queue = new HeapTimerQueue();
        for (let i = 0; i < count; i++) queue.schedule(expiryDelay(i, count), onFire);
      }),
    retimer: () =>
      fireAll(
        count,
        (onFire) => {
          for (let i = 0; i < count; i++) retimer(onFire, expiryDelay(i, count));
        },
        overdue,
      ),
    undici: () =>
      keptAlive(
        fireAll(
          count,
          (onFire) => {
            for (let i = 0; i < count; i++) setFastTimeout(onFire, expiryDelay(i, count));
          },
          overdue,
        ),
      ),
    // No driver of its own: advanced from a setInterval at its resolution, as a user would.
    'timer-wheel': async () => {
      const wheel = new ActionTimerWheel();
      let interval;
      const ms = await fireAll(
        count,
        (onFire) => {
          for (let i = 0; i < count; i++) wheel.schedule(onFire, expiryDelay(i, count));
          interval = setInterval(() => wheel.advance(), TIMER_WHEEL_RESOLUTION_MS);
        },
        overdue,
      );
      clearInterval(interval);
      return ms;
    },
    // Every node is linked, then all are unlinked and called at once: the cost of holding and
    // calling `count` callbacks with no clock, no wait and no order by time.
    floor: () =>
      fireAll(count, (onFire) => {
        const list = new FloorList();
        for (let i = 0; i < count; i++) list.push(onFire);
        list.drain();
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Memory: heap bytes per pending timer, one shared callback. The array that holds the handles
// (every candidate needs them to cancel) is allocated before the baseline reading, so only what
// each timer costs is counted.

export const MEMORY_TIMERS = 1_000_000;

function bytesPerTimer(create, destroy) {
  const handles = new Array(MEMORY_TIMERS).fill(null);
  const before = heapAfterGc();
  create(handles);
  const after = heapAfterGc();
  destroy(handles);
  return (after - before) / MEMORY_TIMERS;
}

export const memory = {
  tickwheel: async () => {
    const wheel = new TimingWheel();
    return bytesPerTimer(
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) handles[i] = wheel.schedule(60_000 + (i & 1023), noop);
      },
      () => wheel.close(),
    );
  },
  native: async () =>
    bytesPerTimer(
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) handles[i] = setTimeout(noop, 60_000 + (i & 1023));
      },
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) clearTimeout(handles[i]);
      },
    ),
  heap: async () => {
    const queue = new HeapTimerQueue();
    return bytesPerTimer(
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) handles[i] = queue.schedule(60_000 + (i & 1023), noop);
      },
      () => queue.close(),
    );
  },
  'timer-wheel': async () => {
    const wheel = new NpmTimerWheel();
    return bytesPerTimer(
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) handles[i] = wheel.schedule(noop, 60_000 + (i & 1023));
      },
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) handles[i].remove();
      },
    );
  },
  retimer: async () =>
    bytesPerTimer(
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) handles[i] = retimer(noop, 60_000 + (i & 1023));
      },
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) handles[i].clear();
      },
    ),
  // Its array of timers counts: it is what holds them (the handle array is counted in neither run).
  undici: async () =>
    bytesPerTimer(
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) handles[i] = setFastTimeout(noop, 60_000 + (i & 1023));
      },
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) clearFastTimeout(handles[i]);
      },
    ),
  floor: async () => {
    const list = new FloorList();
    return bytesPerTimer(
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) handles[i] = list.push(noop);
      },
      (handles) => {
        for (let i = 0; i < MEMORY_TIMERS; i++) list.unlink(handles[i]);
      },
    );
  },
};

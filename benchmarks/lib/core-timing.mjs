/**
 * The core suite's timing scenarios on the system clock: wake-ups of an idle and a sparse wheel,
 * and lateness under 100k timers/s. Each takes the number of alternating rounds.
 */
import { TimingWheel } from '@tickwheel/core';
import retimer from 'retimer';
import timerWheelPackage from 'timer-wheel';
import { CORE_PEERS, keptAlive, noop, TIMER_WHEEL_RESOLUTION_MS, undiciTimers } from './core-kernels.mjs';
import { HeapTimerQueue } from './heap-timer-queue.mjs';
import { alternate, percentile, printScenario, scenario, sleep, summarize } from './harness.mjs';

const { ActionTimerWheel } = timerWheelPackage;

// ---------------------------------------------------------------------------------------------
// 5. Wakeups: native timer callbacks the wheel takes. Idle: an empty wheel (after one timer was
// scheduled and cancelled) over one second. Sparse: 20 timers spread over 2 s.

async function idleWakeups() {
  const wheel = new TimingWheel();
  wheel.schedule(500, noop).cancel();
  await sleep(1000);
  const wakeups = wheel.stats().wakeups;
  wheel.close();
  return wakeups;
}

const SPARSE_TIMERS = 20;
const SPARSE_SPAN_MS = 2000;

function sparseRun(schedule) {
  return new Promise((resolve) => {
    let fired = 0;
    const onFire = () => {
      if (++fired === SPARSE_TIMERS) resolve();
    };
    for (let i = 0; i < SPARSE_TIMERS; i++) schedule(((i + 1) * SPARSE_SPAN_MS) / SPARSE_TIMERS, onFire);
  });
}

const sparse = {
  tickwheel: async () => {
    const wheel = new TimingWheel();
    await sparseRun((delay, cb) => wheel.schedule(delay, cb));
    const wakeups = wheel.stats().wakeups;
    wheel.close();
    return wakeups;
  },
  native: async () => {
    // One native timer per timer: its callbacks are its wakeups.
    let wakeups = 0;
    await sparseRun((delay, cb) =>
      setTimeout(() => {
        wakeups++;
        cb();
      }, delay),
    );
    return wakeups;
  },
  heap: async () => {
    const queue = new HeapTimerQueue();
    await sparseRun((delay, cb) => queue.schedule(delay, cb));
    return queue.wakeups;
  },
};

export async function wakeupScenarios(repeats) {
  const idle = await alternate({ tickwheel: idleWakeups }, Math.min(repeats, 3));
  const idleSc = scenario({
    id: 'wakeups-idle',
    title: 'Wakeups of an idle wheel over 1 s',
    unit: 'wakeups',
    higherIsBetter: false,
    subject: 'tickwheel',
    results: idle,
    target: { max: 0 },
    note: 'wheel.stats().wakeups over one idle second of an empty wheel (one timer scheduled and cancelled first, so the native timer had been armed).',
  });
  printScenario(idleSc);
  const sparseResults = await alternate(sparse, Math.min(repeats, 3));
  const sparseSc = scenario({
    id: 'wakeups-sparse',
    title: `Wakeups for ${SPARSE_TIMERS} sparse timers over 2 s`,
    unit: 'wakeups',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'native',
    results: sparseResults,
    target: { max: SPARSE_TIMERS },
    note: `${SPARSE_TIMERS} timers due every ${SPARSE_SPAN_MS / SPARSE_TIMERS} ms over ${SPARSE_SPAN_MS / 1000} s; target: no more than one wakeup per timer (a 1 ms ticking wheel would take ~${SPARSE_SPAN_MS}).`,
  });
  printScenario(sparseSc);
  return [idleSc, sparseSc];
}

// ---------------------------------------------------------------------------------------------
// 6. Lateness on the system clock at 100k timers/s: a setImmediate loop schedules timers in
// batches (delays 1-50 ms) for LOAD_MS; each callback records now - (scheduled at + delay).

const RATE_PER_S = 100_000;
const LOAD_MS = 1500;
const MAX_DELAY_MS = 50;

function latenessRun(schedule) {
  const capacity = Math.ceil((RATE_PER_S * LOAD_MS) / 1000) + 1000;
  const lateness = new Float64Array(capacity);
  return new Promise((resolve) => {
    let scheduled = 0;
    let fired = 0;
    let loadDone = false;
    const finish = () => {
      const values = lateness.subarray(0, fired);
      resolve({
        p50: percentile(values, 50),
        p99: percentile(values, 99),
        max: percentile(values, 100),
        min: percentile(values, 0),
        count: fired,
      });
    };
    const start = performance.now();
    const pump = () => {
      const now = performance.now();
      const elapsed = now - start;
      const want = Math.min(capacity, Math.floor((elapsed * RATE_PER_S) / 1000));
      while (scheduled < want) {
        const delay = 1 + (scheduled % MAX_DELAY_MS);
        const due = now + delay;
        schedule(delay, () => {
          lateness[fired++] = performance.now() - due;
          if (loadDone && fired === scheduled) finish();
        });
        scheduled++;
      }
      if (elapsed < LOAD_MS) setImmediate(pump);
      else loadDone = true;
    };
    setImmediate(pump);
  });
}

export async function latenessScenarios(repeats) {
  const extra = { p50: {}, max: {}, min: {}, count: {} };
  const record = (name, r) => {
    for (const key of Object.keys(extra)) (extra[key][name] ??= []).push(r[key]);
    return r.p99;
  };
  const results = await alternate(
    {
      tickwheel: async () => {
        const wheel = new TimingWheel();
        const r = await latenessRun((delay, cb) => wheel.schedule(delay, cb));
        wheel.close();
        return record('tickwheel', r);
      },
      native: async () => record('native', await latenessRun((delay, cb) => setTimeout(cb, delay))),
      // The same wheel without the blocked-loop I/O yield, to show what that option costs here.
      'tickwheel-no-io-yield': async () => {
        const wheel = new TimingWheel({ yieldToIoWhenLateMs: Infinity });
        const r = await latenessRun((delay, cb) => wheel.schedule(delay, cb));
        wheel.close();
        return record('tickwheel-no-io-yield', r);
      },
      heap: async () => {
        const queue = new HeapTimerQueue();
        const r = await latenessRun((delay, cb) => queue.schedule(delay, cb));
        queue.close();
        return record('heap', r);
      },
      retimer: async () => record('retimer', await latenessRun((delay, cb) => retimer(cb, delay))),
      undici: async () =>
        record('undici', await keptAlive(latenessRun((delay, cb) => undiciTimers.setFastTimeout(cb, delay)))),
      // No driver of its own: advanced from a setInterval at its resolution, as a user would.
      'timer-wheel': async () => {
        const wheel = new ActionTimerWheel();
        const interval = setInterval(() => wheel.advance(), TIMER_WHEEL_RESOLUTION_MS);
        const r = await latenessRun((delay, cb) => wheel.schedule(cb, delay));
        clearInterval(interval);
        return record('timer-wheel', r);
      },
    },
    // Lateness varies most from run to run on a shared machine: all the rounds.
    repeats,
  );
  const load = `${RATE_PER_S.toLocaleString('en-US')} timers/s for ${LOAD_MS / 1000} s, delays 1-${MAX_DELAY_MS} ms, scheduled in batches from a setImmediate loop; lateness = callback time - (schedule time + delay) on performance.now()`;
  const common = { unit: 'ms', higherIsBetter: false, subject: 'tickwheel', baseline: 'native' };
  const p99 = scenario({
    ...common,
    id: 'lateness-p99',
    title: 'Lateness p99 at 100k timers/s',
    results,
    target: { maxOver: 1 },
    peers: CORE_PEERS,
    note: `${load}. Peers: retimer (a native timer per timer), undici's fast timers (setFastTimeout: swept every 499 ms, so up to a second late, and early by up to a sweep, since a timer's start is taken as the sweep before it), timer-wheel advanced every ${TIMER_WHEEL_RESOLUTION_MS} ms (its resolution). 'tickwheel-no-io-yield' is the same wheel with yieldToIoWhenLateMs: Infinity (by default a wake-up 10 ms or more late yields one loop turn to I/O first).`,
  });
  const p50 = scenario({
    ...common,
    id: 'lateness-p50',
    title: 'Lateness p50 at 100k timers/s',
    results: summarize(extra.p50),
    note: `${load}.`,
  });
  const max = scenario({
    ...common,
    id: 'lateness-max',
    title: 'Lateness max at 100k timers/s',
    results: summarize(extra.max),
    note: `${load}.`,
  });
  // Negative = fired before schedule time + delay. A ratio of two signed figures means nothing.
  const min = {
    ...scenario({
      ...common,
      id: 'lateness-min',
      title: 'Lateness min at 100k timers/s (negative: fired early)',
      results: summarize(extra.min),
    }),
    ratio: null,
    note: `${load}. Native setTimeout counts its delay from libuv's cached loop time, truncated to whole ms, so it can fire up to ~1 ms before schedule time + delay; undici's fast timers take a timer's start as the sweep before its first one, up to 499 ms early; the wheel counts from performance.now() and never fires early.`,
  };
  for (const sc of [p50, p99, max, min]) printScenario(sc);
  return [p50, p99, max, min];
}

/**
 * The root README's one compact table: per Node runtime, how tickwheel compares with what a user
 * would use instead, read from each suite's results.
 *
 * A row is a scenario and one of its peers: a scenario record's `peers` (`{ candidate: label }`,
 * set by the suite, lib/harness.mjs `scenario`) names the candidates a user would pick instead
 * of the subject, and the cell is how many times better the subject is than that peer in that
 * run. So a suite adds rows by naming peers on its scenarios; nothing here lists them. Targets
 * and whether they were met are internal, and stay in benchmarks/README.md.
 */
import { escapeCell, medianOf, ratioText } from './render-format.mjs';

/** The order suites appear in; a suite not listed comes after these, by name. */
const SUITE_ORDER = ['core', 'game', 'fetch', 'http', 'grpc', 'ws', 'redis', 'redis-cluster'];

/**
 * Results files written before scenarios named their peers: their baseline is the peer, under
 * this label. A suite run since then carries `peers` itself, and this entry no longer applies.
 */
const PEERS_BEFORE_THE_FIELD = {
  // The core suite before retimer and undici joined it (lib/core-kernels.mjs CORE_PEERS).
  core: {
    'rolling-10k-1dur': { native: 'native setTimeout', 'timer-wheel': 'timer-wheel 1' },
    'refresh-heavy': { native: 'native setTimeout', 'timer-wheel': 'timer-wheel 1' },
    'expiry-1M': { native: 'native setTimeout' },
    'memory-per-timer': { native: 'native setTimeout', 'timer-wheel': 'timer-wheel 1' },
    'lateness-p99': { native: 'native setTimeout' },
  },
  grpc: {
    'unary-throughput-cpu': { bare: 'bare grpc-js (its deadline option)' },
    'heap-per-in-flight-call': { bare: 'bare grpc-js (its deadline option)' },
  },
  ws: {
    'cpu-per-period': { readme: 'the ws README heartbeat (isAlive + setInterval)' },
    'heap-per-connection': { readme: 'the ws README heartbeat (isAlive + setInterval)' },
  },
  fetch: {
    'bookkeeping-handle': { 'AbortSignal.timeout': 'AbortSignal.timeout' },
    'client-instructions-per-request': { 'AbortSignal.timeout': 'AbortSignal.timeout' },
  },
  http: {
    'requests-per-cpu-second': {
      bare: 'bare node:http (no deadline)',
      'hand-written': 'a setTimeout per request',
      'connect-timeout': 'connect-timeout',
    },
  },
  redis: {
    'redis-fired-throughput': { bullmq: 'BullMQ delayed jobs' },
    'redis-memory-per-timer': { bullmq: 'BullMQ delayed jobs' },
  },
  game: {
    'cpu-per-tick-busy': { colyseus: '@colyseus/timer' },
    'cpu-per-tick-periodic': { 'colyseus setInterval': '@colyseus/timer (setInterval)' },
  },
};

/** How many times better the subject is than `peer` in one run's scenario, or undefined. */
function peerRatio(sc, peer) {
  const s = medianOf(sc, sc.subject);
  const p = medianOf(sc, peer);
  // A ratio needs two positive figures: a lateness of 0 or below (fired early) has none.
  if (!(s > 0) || !(p > 0)) return undefined;
  return sc.higherIsBetter ? s / p : p / s;
}

function peersOf(suiteName, sc) {
  return sc.peers ?? PEERS_BEFORE_THE_FIELD[suiteName]?.[sc.id];
}

function suiteRank(name) {
  const i = SUITE_ORDER.indexOf(name);
  return i < 0 ? SUITE_ORDER.length : i;
}

/** @param suites - `{ suite, runs }` records, as render.mjs loads them */
export function headlineMarkdown(suites) {
  const majors = [...new Set(suites.flatMap((s) => s.runs.map((r) => r.runtime.major)))].sort((a, b) => a - b);
  const lines = [
    `| package | scenario | instead of | ${majors.map((m) => `Node ${m}`).join(' | ')} |`,
    `|---|---|---|${majors.map(() => '---:').join('|')}|`,
  ];
  const ordered = [...suites].sort((a, b) => suiteRank(a.suite) - suiteRank(b.suite) || a.suite.localeCompare(b.suite));
  for (const suite of ordered) {
    // Scenario ids in the order of the runs that name peers, newest major first.
    const ids = [];
    for (const run of [...suite.runs].reverse()) {
      for (const sc of run.scenarios)
        if (peersOf(suite.suite, sc) !== undefined && !ids.includes(sc.id)) ids.push(sc.id);
    }
    for (const id of ids) {
      const perMajor = majors.map((m) =>
        suite.runs.find((r) => r.runtime.major === m)?.scenarios.find((sc) => sc.id === id),
      );
      const reference = [...perMajor]
        .reverse()
        .find((sc) => sc !== undefined && peersOf(suite.suite, sc) !== undefined);
      const peers = peersOf(suite.suite, reference);
      let first = true;
      for (const [peer, label] of Object.entries(peers)) {
        const cells = perMajor.map((sc) => {
          const ratio = sc === undefined || sc.results?.[peer] === undefined ? undefined : peerRatio(sc, peer);
          return ratio === undefined ? '–' : ratioText(ratio);
        });
        if (cells.every((c) => c === '–')) continue;
        lines.push(
          `| ${first ? suite.suite : ''} | ${first ? escapeCell(reference.title ?? id) : ''} | ${escapeCell(label)} | ${cells.join(' | ')} |`,
        );
        first = false;
      }
    }
  }
  lines.push('');
  lines.push(
    'Each cell is how many times better tickwheel is than what a user would use instead, in the same run (median of its rounds; above 1× tickwheel is ahead, below it is behind). The targets the project sets itself, whether they are met, every other candidate and how each figure is measured: [benchmarks/README.md](benchmarks/README.md#results). Wall-clock figures come from a shared, loaded machine; the instruction counts there are the ones a change is judged by.',
  );
  return lines.join('\n');
}

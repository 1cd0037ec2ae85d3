/**
 * The redis-million suite's own table for benchmarks/README.md (between its own markers) and
 * results/summary.md: per run, every measure for tickwheel and BullMQ side by side, then what was
 * measured (scale, the @tickwheel/redis commit, versions, the machine and its load at the start).
 * Every figure comes from results/redis-million.json.
 */
import { escapeCell, human, machineLine, medianOf, ratioText, runtimeLabel, targetText } from './render-format.mjs';

export const MILLION_SUITE = 'redis-million';

/** A figure with its unit; ten seconds and more of ms read as seconds. */
function figure(value, unit) {
  if (typeof value !== 'number' || Number.isNaN(value)) return '–';
  if (unit === 'ms' && Math.abs(value) >= 10_000) return `${human(value / 1000)} s`;
  return `${human(value)} ${unit}`;
}

/** `10 min`, or `20 s` when the window is not whole minutes. */
function duration(ms) {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${human(ms / 1000)} s`;
}

function targetCell(sc) {
  if (!sc.target) return '–';
  return `${targetText(sc)}${sc.met === true ? ' ✓' : sc.met === false ? ' ✗' : ''}`;
}

/** Sums a per-worker counter over a system's workers. */
function workerSum(system, key) {
  return (system?.workers ?? []).reduce((sum, w) => sum + (w[key] ?? 0), 0);
}

/** How the scheduler drove the calls: batches in older runs, an adaptive window since. */
function schedulerText(x, both) {
  if (x.maxInFlight === undefined) return `batches of ${human(x.chunk)}`;
  return (
    `one call per timer, in flight at most an AIMD window of up to ${human(x.maxInFlight)} calls, ` +
    `which ranged ${both((s) => `${human(s.scheduleWindow?.min)}–${human(s.scheduleWindow?.max)}`)}; ` +
    `calls tried again: ${both((s) => human(s.scheduleCallsRetried))}`
  );
}

function runBlock(run, headingLevel) {
  const x = run.extra ?? {};
  const systems = x.systems ?? {};
  const tw = systems.tickwheel ?? {};
  const bq = systems.bullmq ?? {};
  const lines = [
    `${'#'.repeat(headingLevel)} ${runtimeLabel(run)}: ${human(x.timers)} timers over ${duration(x.windowMs)}`,
    '',
    '| measure | tickwheel | BullMQ | tickwheel vs BullMQ | target |',
    '|---|---:|---:|---:|---|',
  ];
  for (const sc of run.scenarios) {
    lines.push(
      `| ${escapeCell(sc.title ?? sc.id)} | ${figure(medianOf(sc, 'tickwheel'), sc.unit)} | ${figure(medianOf(sc, 'bullmq'), sc.unit)} | ${ratioText(sc.ratio)} | ${escapeCell(targetCell(sc))} |`,
    );
  }
  lines.push('');
  const both = (pick) => `tickwheel ${pick(tw)}, BullMQ ${pick(bq)}`;
  lines.push(
    `One run of each system, one after the other, each on its own redis-server ${escapeCell(tw.redisVersion ?? '?')} (no RDB, no AOF): ${x.workers} worker processes (concurrency ${x.concurrency}), one scheduler process (${schedulerText(x, both)}), a ${tw.payloadBytes ?? '?'}-byte JSON payload. ` +
      `Scheduling took ${both((s) => `${human(s.scheduleMs / 1000)} s`)} within a lead time of ${both((s) => `${human(s.leadMs / 1000)} s`)} (timers fired before scheduling ended: ${both((s) => human(s.firedWhileScheduling))}). ` +
      `Redis CPU in all: ${both((s) => `${human(s.redisCpuSeconds?.scheduling + s.redisCpuSeconds?.firing)} s`)}; worker CPU in all: ${both((s) => `${human(s.workerCpuSeconds?.scheduling + s.workerCpuSeconds?.firing)} s`)}. ` +
      `Worker errors / failed / stale or stalled: ${both((s) => ['errors', 'failed', 'stale'].map((k) => workerSum(s, k)).join(' / '))}. ` +
      `Earliest delivery (lateness min; never early, within the error of the workers' clock offset): ${both((s) => figure(s.latenessMs?.min, 'ms'))}. ` +
      `A timer counts as lost when it was not delivered within ${figure(x.graceMs, 'ms')} of the last due time; keys left in Redis at the end: ${both((s) => human(s.memory?.keysAtEnd))}, so a lost timer may be one still waiting there. The lateness figures cover the timers delivered. ` +
      `Every timer had fired ${both((s) => (s.allFiredAfterLastDueMs === null ? 'never (see lost)' : figure(s.allFiredAfterLastDueMs, 'ms')))} after the last due time.`,
  );
  lines.push('');
  const dirty = x.redisPackageUncommittedChanges ? ' plus uncommitted changes' : '';
  lines.push(
    `\`${run.command}\` under ${run.runtime.node}, ${run.date}. @tickwheel/redis as of commit \`${x.redisPackageCommit ?? '?'}\` (branch ${x.redisPackageBranch ?? '?'}${dirty}), BullMQ ${x.bullmq}, ioredis ${x.ioredis}. ` +
      `Load average at the start ${(x.loadAverageAtStart ?? []).join(' / ')}${x.note ? ` (${escapeCell(x.note)})` : ''}` +
      (tw.loadAtEnd ? `; at the end of each system's run: ${both((s) => (s.loadAtEnd ?? []).join(' / '))}.` : '.'),
  );
  lines.push(`Machine: ${machineLine(run)}.`);
  lines.push('');
  return lines;
}

/** @param suite - the `{ suite, runs }` record of results/redis-million.json, or undefined */
export function millionMarkdown(suite, headingLevel) {
  if (suite === undefined || suite.runs.length === 0)
    return 'No results yet: run `npm run bench -- redis-million --node current` (about 40 minutes).\n';
  return suite.runs.flatMap((run) => runBlock(run, headingLevel)).join('\n');
}

/**
 * ws's due schedule (one wheel handle per due time, entries in rings) against one core wheel
 * handle per connection, for counting instructions under cachegrind (cachegrind.mjs): the
 * question of issue 30, whether packages/ws/src/due-schedule.ts can be replaced by the core
 * wheel. Each op re-files one of CONNECTIONS records to `now + PERIOD_MS` rounded up to the
 * ping-slack grid, as a heartbeat does when a record comes due or a pong answers; the manual
 * clock advances 1 ms every OPS_PER_MS ops, so records are re-filed long before they are due
 * and groups of one due time fill as they do on a server (nothing fires).
 *
 *   node --expose-gc lib/ws-schedule-kernel.mjs refile <due-schedule|wheel-handle> <ops>   # one run (the kernel)
 *   node --expose-gc suites/ws.mjs --schedule-count [--node 24]                        # both counted
 */
import { fileURLToPath } from 'node:url';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { DueSchedule } from '../../packages/ws/dist/due-schedule.js';
import { instructionsPerOp, isMain } from './harness.mjs';

const CONNECTIONS = 10_000;
const PERIOD_MS = 2_000;
const SLACK_MS = PERIOD_MS / 32;
const OPS_PER_MS = 20;

const dueAt = (now) => Math.ceil((now + PERIOD_MS) / SLACK_MS) * SLACK_MS;

const CANDIDATES = {
  'due-schedule'(ops) {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const schedule = new DueSchedule(wheel, { run: () => undefined });
    const entries = Array.from({ length: CONNECTIONS }, () => ({ prev: undefined, next: undefined }));
    for (const e of entries) schedule.file(e, dueAt(0));
    for (let i = 0; i < ops; i++) {
      if (i % OPS_PER_MS === 0) clock.advance(1);
      schedule.file(entries[i % CONNECTIONS], dueAt(clock.now()));
    }
    wheel.close();
  },
  'wheel-handle'(ops) {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const handles = Array.from({ length: CONNECTIONS }, () => wheel.scheduleAt(dueAt(0), () => undefined));
    for (let i = 0; i < ops; i++) {
      if (i % OPS_PER_MS === 0) clock.advance(1);
      const now = clock.now();
      handles[i % CONNECTIONS].refresh(dueAt(now) - now);
    }
    wheel.close();
  },
};

/** Short and long runs of a count: 200k and 1.2M re-files, after the same 200k warm-up. */
const COUNT_OPS = { shortOps: 200_000, longOps: 1_200_000 };

/** Counts both candidates under `node` (instructions per re-file) and prints one JSON line each. */
export function scheduleCounts(node = process.execPath) {
  for (const candidate of Object.keys(CANDIDATES)) {
    const { perOp } = instructionsPerOp(node, 'refile', candidate, COUNT_OPS, {
      kernel: fileURLToPath(import.meta.url),
    });
    console.log(JSON.stringify({ node, candidate, perOp: Math.round(perOp * 10) / 10 }));
  }
}

if (isMain(import.meta.url)) {
  const [scenario, candidate, opsText] = process.argv.slice(2);
  const ops = Number(opsText);
  if (scenario !== 'refile' || !(candidate in CANDIDATES) || !(ops > 0)) {
    console.error(`usage: ws-schedule-kernel.mjs refile <${Object.keys(CANDIDATES).join('|')}> <ops>`);
    process.exit(2);
  }
  CANDIDATES[candidate](COUNT_OPS.shortOps);
  CANDIDATES[candidate](ops);
}

/**
 * ws's due schedule (one wheel handle per due time, entries in rings) against one core wheel
 * handle per connection, for counting instructions under cachegrind (cachegrind.mjs): the
 * question of issue 30, whether packages/ws/src/due-schedule.ts can be replaced by the core
 * wheel. Each op re-files one of CONNECTIONS records to `now + PERIOD_MS` rounded up to the
 * ping-slack grid, as a heartbeat does when a record comes due or a pong answers; the manual
 * clock advances 1 ms every OPS_PER_MS ops, so records are re-filed long before they are due
 * and groups of one due time fill as they do on a server (nothing fires).
 *
 *   node --expose-gc lib/ws-schedule-kernel.mjs <due-schedule|wheel-handle> <ops>
 */
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { DueSchedule } from '../../packages/ws/dist/due-schedule.js';

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

const [candidate, opsText] = process.argv.slice(2);
const ops = Number(opsText);
if (!(candidate in CANDIDATES) || !(ops > 0)) {
  console.error(`usage: ws-schedule-kernel.mjs <${Object.keys(CANDIDATES).join('|')}> <ops>`);
  process.exit(2);
}
CANDIDATES[candidate](200_000);
CANDIDATES[candidate](ops);

/**
 * The sse suite: @tickwheel/http's `eventStream` against the hand-written `setInterval` per
 * stream (what better-sse and most SSE code do), with STREAMS open, idle streams and a heartbeat
 * every HEARTBEAT_MS (lib/sse-streams.mjs says exactly what each server does), in this one run:
 *
 * 1. server instructions per heartbeat period, counted by cachegrind (long run minus short run,
 *    divided by the periods between): the figure that does not move with load;
 * 2. server heap bytes per open stream: heapUsed after full collections with STREAMS streams,
 *    then with twice as many, divided by STREAMS, each candidate in a fresh process, REPEATS times.
 *
 *   node --expose-gc suites/sse.mjs          # or: npm run bench -- sse
 *
 * BENCH_REPEATS overrides the heap rounds (default 3); BENCH_INSTRUCTIONS=0 skips the cachegrind
 * count (several minutes per runtime); SSE_STREAMS changes the stream count (default 10 000).
 */
import { fileURLToPath } from 'node:url';
import { alternate, childValue, isMain, runSuite, scenario } from '../lib/harness.mjs';
import {
  HEARTBEAT_MS,
  instructionsPerPeriod,
  LONG_PERIODS,
  SHORT_PERIODS,
  SSE_CANDIDATES,
  STREAMS,
} from '../lib/sse-streams.mjs';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const LAB = fileURLToPath(new URL('../lib/sse-streams.mjs', import.meta.url));

/** Heap bytes per stream of `candidate`, measured by a fresh server process. */
function heapPerStream(candidate) {
  return childValue(LAB, ['heap', candidate], { label: `sse heap ${candidate}` });
}
const PEERS = { 'hand-written': 'a setInterval per stream' };

export async function run() {
  const heap = await alternate(
    Object.fromEntries(SSE_CANDIDATES.map((name) => [name, () => heapPerStream(name)])),
    REPEATS,
  );
  const setup = `${STREAMS.toLocaleString('en-US')} open, idle Server-Sent Events streams on one node:http server, a heartbeat comment every ${HEARTBEAT_MS / 1000} s; the clients are raw sockets in a child process that read and drop every byte. tickwheel = eventStream(req, res, { heartbeatMs: ${HEARTBEAT_MS} }) (its defaults otherwise); hand-written = the same head, setInterval(() => res.write(':\\n\\n'), ${HEARTBEAT_MS}) per stream, cleared on the response's 'close'. Both write the same bytes to the same sockets.`;
  const scenarios = [];
  const instructions = process.env.BENCH_INSTRUCTIONS === '0' ? undefined : instructionsPerPeriod(process.execPath);
  if (instructions !== undefined) {
    scenarios.push(
      scenario({
        id: 'instructions-per-heartbeat-period',
        title: `Server instructions per ${HEARTBEAT_MS / 1000} s heartbeat period, ${STREAMS.toLocaleString('en-US')} idle streams, eventStream vs setInterval per stream (cachegrind)`,
        unit: 'instructions',
        higherIsBetter: false,
        subject: 'tickwheel',
        baseline: 'hand-written',
        results: instructions,
        peers: PEERS,
        target: { ratio: 2 },
        note: `${setup} Instructions of the server process under valgrind --tool=cachegrind, (run held ${LONG_PERIODS} periods after the last stream opened - run held ${SHORT_PERIODS}) / ${LONG_PERIODS - SHORT_PERIODS}: each stream writes one heartbeat per period in any window of whole periods. Target (issue 43): at least 2x fewer than the setInterval per stream.`,
      }),
    );
  }
  scenarios.push(
    scenario({
      id: 'heap-per-stream',
      title: `Server heap bytes per open idle stream, eventStream vs setInterval per stream`,
      unit: 'bytes',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'hand-written',
      results: heap,
      target: { maxOver: 0 },
      note: `${setup} The server's heapUsed after full collections with ${STREAMS} streams, then with ${2 * STREAMS}, divided by ${STREAMS}; medians of ${REPEATS} rounds, each candidate in a fresh process. Target (issue 43): no more than the setInterval per stream.`,
    }),
  );
  return { scenarios };
}

if (isMain(import.meta.url)) {
  await runSuite('sse', run, { repeats: REPEATS, print: true });
  process.exit(0);
}

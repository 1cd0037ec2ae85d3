/**
 * The showcase: runs every example in turn, on 127.0.0.1 only, prints what happened (what timed
 * out, when and why) and ends with a summary table. `npm start` at the repository root builds
 * the packages and runs it. It needs no Redis server: game-buffs runs on the embedded ioredis-mock
 * unless REDIS_URL is set, and cluster-timers and ws-presence start a private redis-server when
 * the binary is installed, or say why they are skipped. @tickwheel/otel watches the whole run: the showcase ends
 * with what its Prometheus endpoint says about every timeout and wake-up of the run.
 */
import { main as clusterTimers } from './cluster-timers/src/main.mjs';
import { main as fetchTimeouts } from './fetch-timeouts/src/main.mjs';
import { main as gameBuffs } from './game-buffs/src/main.mjs';
import { main as grpcDeadlines } from './grpc-deadlines/src/main.mjs';
import { main as httpDeadlines } from './http-deadlines/src/main.mjs';
import { main as llmStreamIdle } from './llm-stream-idle/src/main.mjs';
import { startMetricsEndpoint, summarize } from './otel-metrics/src/metrics-endpoint.mjs';
import { main as otelMetrics } from './otel-metrics/src/main.mjs';
import { main as wsBrowserWatch } from './ws-browser-watch/src/main.mjs';
import { main as wsHeartbeat } from './ws-heartbeat/src/main.mjs';
import { main as wsPresence } from './ws-presence/src/main.mjs';

const EXAMPLES = [
  {
    name: 'game-buffs',
    shows:
      'TimerSet buffs and cooldowns on a 20 Hz ManualClock loop; durable buffs across a restart (@tickwheel/core, @tickwheel/redis)',
    run: gameBuffs,
  },
  {
    name: 'cluster-timers',
    shows: 'three worker processes share durable timers; one is SIGKILLed mid-handler (@tickwheel/redis)',
    run: clusterTimers,
  },
  {
    name: 'fetch-timeouts',
    shows:
      'headers, body-idle and total timeouts, retries, budgets and deadlines against a slow server (@tickwheel/fetch)',
    run: fetchTimeouts,
  },
  {
    name: 'llm-stream-idle',
    shows:
      'the openai SDK through withTimeouts(fetch): a stream stuck behind keep-alive comments fails in eventIdleMs (@tickwheel/fetch)',
    run: llmStreamIdle,
  },
  {
    name: 'ws-heartbeat',
    shows: 'heartbeat and idle detection: healthy, silent, killed and frozen clients (@tickwheel/ws)',
    run: wsHeartbeat,
  },
  {
    name: 'ws-browser-watch',
    shows:
      "keepalives to quiet connections, and a page's watch() finding a stalled server dead (@tickwheel/ws/browser)",
    run: wsBrowserWatch,
  },
  {
    name: 'ws-presence',
    shows:
      'two ws servers share presence on Redis: a user moves without a leave, a killed server’s users leave once (@tickwheel/ws, @tickwheel/redis)',
    run: wsPresence,
  },
  {
    name: 'grpc-deadlines',
    shows: 'a deadline across client -> server A -> server B and an HTTP service (@tickwheel/grpc, @tickwheel/fetch)',
    run: grpcDeadlines,
  },
  {
    name: 'http-deadlines',
    shows:
      "an express handler's fetch and gRPC calls share the request's deadline; 503 in time (@tickwheel/http, @tickwheel/fetch, @tickwheel/grpc)",
    run: httpDeadlines,
  },
  {
    name: 'otel-metrics',
    shows: 'every timeout as OpenTelemetry metrics on a Prometheus endpoint, scraped (@tickwheel/otel)',
    run: otelMetrics,
  },
];

const rule = '─'.repeat(100);
console.log('tickwheel showcase: every example, in turn, on 127.0.0.1\n');
// The whole run, seen through @tickwheel/otel: summarised at the end from a real scrape.
const metrics = await startMetricsEndpoint();
const rows = [];
for (const example of EXAMPLES) {
  console.log(`${rule}\n${example.name}: ${example.shows}\n${rule}`);
  const started = performance.now();
  let row;
  try {
    const result = await example.run({ print: (line) => console.log(`  ${line}`) });
    row = result.skipped ? { outcome: 'skipped', summary: result.skipped } : { outcome: 'ok', summary: result.summary };
  } catch (error) {
    console.error(error);
    row = { outcome: 'FAILED', summary: String(error?.message ?? error) };
    process.exitCode = 1;
  }
  rows.push({ name: example.name, seconds: ((performance.now() - started) / 1000).toFixed(1), ...row });
  console.log();
}

const widths = {
  name: Math.max(7, ...rows.map((r) => r.name.length)),
  outcome: Math.max(7, ...rows.map((r) => r.outcome.length)),
  seconds: 4,
};
console.log(`${rule}\nsummary\n${rule}`);
console.log(
  `${'example'.padEnd(widths.name)}  ${'outcome'.padEnd(widths.outcome)}  ${'time'.padStart(widths.seconds + 2)}  what happened`,
);
for (const r of rows) {
  console.log(
    `${r.name.padEnd(widths.name)}  ${r.outcome.padEnd(widths.outcome)}  ${r.seconds.padStart(widths.seconds)} s  ${r.summary}`,
  );
}

console.log(`\n${rule}\nmetrics of the whole run, scraped from ${metrics.url} (@tickwheel/otel)\n${rule}`);
try {
  for (const line of summarize((await metrics.scrape()).samples)) console.log(line);
} finally {
  await metrics.close();
}

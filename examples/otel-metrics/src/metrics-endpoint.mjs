/**
 * A Prometheus scrape endpoint on 127.0.0.1 (a free port) fed by @tickwheel/otel: the SDK's
 * MeterProvider with @opentelemetry/exporter-prometheus as its reader, served from our own
 * node:http server (the exporter's handler, `preventServerStart`) so that port 0 picks a free port.
 */
import http from 'node:http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { instrumentTickwheel } from '@tickwheel/otel';

/**
 * Starts the endpoint and turns the instrumentation on.
 * @returns `url` (the scrape URL), `scrape()` (the parsed samples), `close()`
 */
export async function startMetricsEndpoint() {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  const instrumentation = instrumentTickwheel({ meterProvider });
  const server = http.createServer((req, res) => {
    if (req.url === '/metrics') exporter.getMetricsRequestHandler(req, res);
    else res.writeHead(404).end();
  });
  await new Promise((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/metrics`;
  return {
    url,
    /** Scrapes the endpoint as Prometheus would. */
    async scrape() {
      const res = await fetch(url);
      if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
      const text = await res.text();
      return { text, samples: parsePrometheusText(text) };
    },
    async close() {
      instrumentation.disable();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await meterProvider.shutdown();
    },
  };
}

/**
 * The samples of a Prometheus text exposition (format 0.0.4): `{ name, labels, value }` per
 * sample line; comments (`# HELP`, `# TYPE`) are skipped.
 */
export function parsePrometheusText(text) {
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key] = value.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of the samples named `name` whose labels include `labels`. */
export function total(samples, name, labels = {}) {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/**
 * A few lines on what the metrics say: timeouts by package and phase, retries, handler aborts,
 * how late the wheel woke (the bucket under which 99% of wake-ups fell), and, when there were
 * any, TimerSet expirations and Redis timers.
 */
export function summarize(samples) {
  const lines = [];
  const timeouts = samples.filter((s) => s.name === 'tickwheel_timeouts_total');
  const byKind = new Map();
  for (const s of timeouts) {
    const kind = `${s.labels.tickwheel_package} ${s.labels.tickwheel_phase}`;
    byKind.set(kind, (byKind.get(kind) ?? 0) + s.value);
  }
  const kinds = [...byKind].sort(([a], [b]) => a.localeCompare(b));
  lines.push(`timeouts: ${kinds.length === 0 ? 'none' : kinds.map(([kind, n]) => `${kind} ${n}`).join(', ')}`);
  lines.push(
    `fetch retries ${total(samples, 'tickwheel_fetch_retries_total')}, gRPC handler aborts ${total(samples, 'tickwheel_grpc_handler_aborts_total')}`,
  );
  const wakeups = total(samples, 'tickwheel_wheel_lateness_count');
  const fired = total(samples, 'tickwheel_wheel_fired_total');
  const p99 = quantileBound(samples, 'tickwheel_wheel_lateness', 0.99);
  lines.push(`wheel: ${wakeups} wake-ups, ${fired} timers fired, 99% of wake-ups within ${within(p99)} of their time`);
  const expirations = total(samples, 'tickwheel_timer_set_expirations_total');
  if (expirations > 0) lines.push(`TimerSet: ${expirations} expirations`);
  const claimed = total(samples, 'tickwheel_redis_lateness_count');
  if (claimed > 0) {
    const redisP99 = quantileBound(samples, 'tickwheel_redis_lateness', 0.99);
    lines.push(
      `Redis timers: ${claimed} claimed, 99% within ${within(redisP99)} of due (server clock), ` +
        `${total(samples, 'tickwheel_redis_leases_lost_total')} leases lost, ${total(samples, 'tickwheel_redis_duplicates_total')} duplicates suppressed`,
    );
  }
  return lines;
}

function within(seconds) {
  return seconds === Infinity ? 'more than 10 s' : `${seconds * 1000} ms`;
}

/** The upper bound of the histogram bucket that holds quantile `q` (cumulative `_bucket` samples). */
export function quantileBound(samples, histogram, q) {
  const buckets = new Map();
  for (const s of samples) {
    if (s.name !== `${histogram}_bucket`) continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  const sorted = [...buckets].sort(([a], [b]) => a - b);
  const count = sorted.at(-1)?.[1] ?? 0;
  for (const [le, cumulative] of sorted) if (cumulative >= q * count) return le;
  return Infinity;
}

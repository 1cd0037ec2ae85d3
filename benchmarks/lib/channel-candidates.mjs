/**
 * The candidates of the diagnostics-channel scenarios (issue 18: channels free when unused, and
 * what the OpenTelemetry bridge costs when on):
 *
 * - `channels compiled out`, the baseline: the packages' own built code with every channel
 *   compiled out, loaded from a temporary copy by {@link compiledOut};
 * - `no subscriber`: the packages as built, nobody subscribed;
 * - `OpenTelemetry bridge on`: the same, with `instrumentTickwheel()` recording into the SDK's
 *   MeterProvider ({@link bridgeOn}).
 *
 * The baseline is the packages' own built code with every diagnostics channel compiled out. `compiledOut(['core', 'fetch'])` copies each `packages/<name>/dist` into
 * a temporary `node_modules/@tickwheel/<name>` and replaces every `<channel>.hasSubscribers` read
 * with `false`, so each guarded publishing site becomes `if (false) ...`, which V8 drops (the
 * adapters publish through core's channel kit, `guardedPublisher`, whose one guard is core's). The
 * copy is otherwise byte for byte the build under test, and its packages resolve each other (a
 * copied fetch loads the copied core), so "no subscriber" vs "compiled out" in one run measures
 * exactly what the guards cost. The copies live under the repository's `node_modules/`, so that
 * the peers a copied adapter imports (`@grpc/grpc-js`, `ws`) resolve as they do for the build.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { instrumentTickwheel } from '@tickwheel/otel';
import { BENCH_DIR } from './harness.mjs';

const GUARD = /\b[A-Za-z_$][\w$]*\.hasSubscribers\b/g;

/**
 * @param names - package folder names (`'core'`, `'fetch'`, ...); core is always copied too
 * @param strip - false for a plain copy of the build: in one process, each candidate then runs
 *   code of its own, so that one candidate's type feedback cannot slow another's (the
 *   compiled-out copy against the shared, already-used build measured 268 vs 395 ns per timer)
 * @param from - the packages folder to copy (another checkout's, to compare two builds)
 * @returns `{ load(name), dir, remove() }`: `load` imports a copied package's entry
 * @throws when a package's build has no guard to compile out (the benchmark would measure nothing)
 */
export function compiledOut(names, strip = true, from = path.join(BENCH_DIR, '..', 'packages')) {
  const parent = path.join(BENCH_DIR, '..', 'node_modules', '.tickwheel-channel-copies');
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.mkdtempSync(path.join(parent, 'copy-'));
  for (const name of new Set(['core', ...names])) {
    const source = path.join(from, name);
    const target = path.join(dir, 'node_modules', '@tickwheel', name);
    fs.mkdirSync(path.join(target, 'dist'), { recursive: true });
    fs.copyFileSync(path.join(source, 'package.json'), path.join(target, 'package.json'));
    let guards = 0;
    let publishesThroughKit = false;
    // Recursive: core's dist has folders (timer-set/).
    for (const file of fs.readdirSync(path.join(source, 'dist'), { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.js')) continue;
      fs.mkdirSync(path.dirname(path.join(target, 'dist', file)), { recursive: true });
      const code = fs.readFileSync(path.join(source, 'dist', file), 'utf8');
      if (name !== 'core' && /\bguardedPublisher\b/.test(code)) publishesThroughKit = true;
      const stripped = code.replace(GUARD, (guard) => {
        guards++;
        return strip ? 'false' : guard;
      });
      fs.writeFileSync(path.join(target, 'dist', file), stripped);
    }
    if (guards === 0 && !publishesThroughKit) {
      throw new Error(`compiledOut: packages/${name}/dist has no hasSubscribers guard to compile out`);
    }
  }
  return {
    dir,
    load: (name) => import(pathToFileURL(path.join(dir, 'node_modules', '@tickwheel', name, 'dist', 'index.js')).href),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** The names of the three candidates, as the results files show them. */
export const CHANNEL_CANDIDATES = Object.freeze({
  compiledOut: 'channels compiled out',
  noSubscriber: 'no subscriber',
  bridgeOn: 'OpenTelemetry bridge on',
});

/**
 * Turns the OpenTelemetry bridge on as a service would: `instrumentTickwheel()` into the SDK's
 * MeterProvider, read by a periodic reader (into the in-memory exporter) whose interval never
 * comes during a sample, so the figures are the recording cost, not an export's.
 * @returns `disable()`
 */
export function bridgeOn() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const meterProvider = new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })],
  });
  const instrumentation = instrumentTickwheel({ meterProvider });
  return {
    disable: async () => {
      instrumentation.disable();
      await meterProvider.shutdown();
    },
  };
}

/**
 * Prints the slowest test files of a vitest run, with their times and what each waits on.
 *
 *   node scripts/slowest-tests.mjs                      run the whole suite (`vitest run`), then print the table
 *   node scripts/slowest-tests.mjs --report run.json    read a report of vitest's json reporter instead
 *   node scripts/slowest-tests.mjs --top 40 -- --project ws    more rows; arguments after `--` go to vitest
 *   node scripts/slowest-tests.mjs --write              also write every file's time to tests/file-durations.json,
 *                                                       the order scripts/slowest-first-sequencer.mts runs files in
 *
 * A file's time is what vitest's json reporter gives: from its first test's start to its last
 * test's end (its beforeAll hooks before the first test and its import are not in it). What a
 * file waits on is read from its text and that of the test files it imports (helpers, fixtures):
 * each kind of real-time wait below that occurs there is named, with its count.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');

/** Kinds of real-time waits, each with the pattern that finds it in a test file or helper. */
const WAITS = [
  ['sleep', /\bsleep\(|\bsettle\(|\bdelay\(|setTimeout\(/g],
  ['until', /\buntil\(|\bwaitFor\w*\(|\bvi\.waitFor\(|\bonce\(/g],
  ['chromium', /startBrowser\(|chromium\.launch/g],
  ['redis-server', /startRedisServer\(|inject\('redisUrl'\)|redisSocket/g],
  ['redis-cluster', /startRedisCluster\(/g],
  ['child process', /\bfork\w*\(|\bspawn(Sync)?\(|\bexecFile(Sync)?\(|\bexecSync\(/g],
  ['python', /python3?\b|PYTHON\b/g],
  ['tsc', /\bcompile\(|compilers\[/g],
  ['npm', /npm (pack|install|ci)|'pack'/g],
  ['fake timers', /vi\.useFakeTimers|ManualClock/g],
];

const { values, positionals } = parseArgs({
  options: {
    report: { type: 'string' },
    top: { type: 'string', default: '25' },
    write: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});

/** The json report to read: the one given, or a fresh run's. */
function report() {
  if (values.report !== undefined) return JSON.parse(fs.readFileSync(values.report, 'utf8'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tickwheel-slowest-'));
  const file = path.join(dir, 'report.json');
  const started = Date.now();
  const run = spawnSync(
    'npx',
    ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${file}`, ...positionals],
    { cwd: root, stdio: 'inherit' },
  );
  console.log(`\nvitest run: ${((Date.now() - started) / 1000).toFixed(1)} s wall, exit ${run.status}; report ${file}`);
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/** A test file's text and that of the files it imports from the repository's test folders, once each. */
function sources(file, seen = new Set()) {
  if (seen.has(file) || !fs.existsSync(file)) return seen;
  seen.add(file);
  const text = fs.readFileSync(file, 'utf8');
  for (const [, spec] of text.matchAll(/(?:from|import\(|fork\w*\(|new URL\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = path.resolve(path.dirname(file), spec);
    // Only test code: helpers and fixtures, not the sources under test.
    const parts = path.relative(root, target).split(path.sep);
    if (!parts.includes('test') && !parts.includes('tests')) continue;
    for (const candidate of [target, target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts')]) {
      if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) {
        sources(candidate, seen);
        break;
      }
    }
  }
  return seen;
}

/** What a file waits on: each kind found, with its count, most frequent first. */
function waitsOf(file) {
  const counts = new Map();
  for (const source of sources(file)) {
    const text = fs.readFileSync(source, 'utf8');
    for (const [kind, pattern] of WAITS) {
      const n = text.match(pattern)?.length ?? 0;
      if (n > 0) counts.set(kind, (counts.get(kind) ?? 0) + n);
    }
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');
}

const { testResults, numTotalTests, numFailedTests, startTime } = report();
const files = testResults
  .map((result) => ({
    // Repository-relative, also for a report written in another checkout of the repository.
    file: path.relative(root, result.name).replace(/^(\.\.\/)+[^]*?\/(?=(packages|examples|tests|benchmarks)\/)/, ''),
    path: result.name,
    seconds: (result.endTime - result.startTime) / 1000,
    tests: result.assertionResults.length,
    failed: result.assertionResults.filter((test) => test.status === 'failed').length,
  }))
  .sort((a, b) => b.seconds - a.seconds);
const total = files.reduce((sum, f) => sum + f.seconds, 0);
const end = Math.max(...testResults.map((result) => result.endTime));

const top = files.slice(0, Number(values.top));
console.log(`| # | file | s | tests | waits on |`);
console.log(`|---|---|---|---|---|`);
top.forEach((f, i) => {
  const failed = f.failed > 0 ? ` (${f.failed} failed)` : '';
  console.log(`| ${i + 1} | ${f.file} | ${f.seconds.toFixed(1)} | ${f.tests}${failed} | ${waitsOf(f.path)} |`);
});
const topSum = top.reduce((sum, f) => sum + f.seconds, 0);
console.log(
  `\n${files.length} files, ${numTotalTests} tests (${numFailedTests} failed); files' times add up to ${total.toFixed(0)} s ` +
    `(the ${top.length} above: ${topSum.toFixed(0)} s); first start to last end: ${((end - startTime) / 1000).toFixed(0)} s`,
);

if (values.write) {
  const durations = Object.fromEntries(
    files
      .map((f) => [f.file.split(path.sep).join('/'), Math.round(f.seconds * 10) / 10])
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  fs.writeFileSync(path.join(root, 'tests/file-durations.json'), `${JSON.stringify(durations, null, 2)}\n`);
  console.log(`wrote tests/file-durations.json (${files.length} files)`);
}

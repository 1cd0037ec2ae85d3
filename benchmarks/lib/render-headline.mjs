/**
 * The root README's one compact table: a few headline scenarios per suite, one column per Node
 * runtime, each cell the scenario's headline figure and whether its target was met. Every other
 * scenario, target and machine line is in benchmarks/README.md.
 */
import { escapeCell, isBarRow, medianOf, ratioText, targetText, withUnit } from './render-format.mjs';

/**
 * The scenarios a newcomer asks about first, per suite: what the package saves against the tool
 * it replaces. Listed by id; one a results file lacks is left out of the table.
 */
const HEADLINES = [
  ['core', 'rolling-10k-1dur'],
  ['core', 'instructions-rolling-10k-1dur'],
  ['core', 'memory-per-timer'],
  ['core', 'wakeups-idle'],
  ['game', 'cpu-per-tick-busy'],
  ['game', 'cpu-per-tick-periodic'],
  ['grpc', 'unary-instructions-traced'],
  ['grpc', 'unary-throughput-cpu-traced'],
  ['grpc', 'unary-throughput-cpu'],
  ['grpc', 'heap-per-in-flight-call'],
  ['ws', 'cpu-per-period'],
  ['ws', 'heap-per-connection'],
  ['fetch', 'bookkeeping-handle'],
  ['fetch', 'heap-retained-fetch'],
  ['fetch', 'client-instructions-per-request'],
  ['http', 'instructions-per-request'],
  ['http', 'requests-per-cpu-second'],
  ['http', 'heap-per-idle-connection'],
  ['redis', 'redis-fired-throughput'],
  ['redis', 'redis-memory-per-timer'],
  ['redis-cluster', 'failover-lost'],
];

function cell(sc) {
  if (sc === undefined) return '–';
  const figure = isBarRow(sc) ? ratioText(sc.ratio) : withUnit(medianOf(sc, sc.subject), sc.unit);
  return `${figure}${sc.met === true ? ' ✓' : sc.met === false ? ' ✗' : ''}`;
}

/** @param suites - `{ suite, runs }` records, as render.mjs loads them */
export function headlineMarkdown(suites) {
  const majors = [...new Set(suites.flatMap((s) => s.runs.map((r) => r.runtime.major)))].sort((a, b) => a - b);
  const lines = [
    `| package | scenario | vs | target | ${majors.map((m) => `Node ${m}`).join(' | ')} |`,
    `|---|---|---|---|${majors.map(() => '---:').join('|')}|`,
  ];
  for (const [name, id] of HEADLINES) {
    const suite = suites.find((s) => s.suite === name);
    const perMajor = majors.map((m) =>
      suite?.runs.find((r) => r.runtime.major === m)?.scenarios.find((sc) => sc.id === id),
    );
    const reference = perMajor.find(Boolean);
    if (reference === undefined) continue;
    lines.push(
      `| ${name} | ${escapeCell(reference.title ?? id)} | ${escapeCell(reference.baseline ?? '–')} | ${escapeCell(targetText(reference))} | ${perMajor.map((sc) => escapeCell(cell(sc))).join(' | ')} |`,
    );
  }
  lines.push('');
  lines.push(
    'A ratio is how many times better tickwheel is than the "vs" candidate; other cells are tickwheel\'s own figure (✓ target met, ✗ missed). Every scenario, its floor, its machine line and how it is measured: [benchmarks/README.md](benchmarks/README.md#results).',
  );
  return lines.join('\n');
}

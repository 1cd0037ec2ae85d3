/**
 * The "Diagnostics channels" table of results/summary.md and the README (issue 18): per hot
 * path that publishes, the % more instructions the build pays with no subscriber than with its
 * channels compiled out (target < 1%), and the % the OpenTelemetry bridge adds on top, one column
 * per Node runtime. Every figure comes from the `channels-instructions-*` rows that
 * channel-overhead.mjs wrote into the suites' results files.
 */
import { escapeCell, runtimeLabel } from './render-format.mjs';

const UNUSED = 'channels-instructions-';
const BRIDGE = 'channels-bridge-instructions-';

/** `+0.12%`, with the sign, two decimals below 10%. */
function pctText(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '–';
  const digits = Math.abs(value) < 10 ? 2 : 1;
  return `${value >= 0 ? '+' : ''}${value.toFixed(digits)}%`;
}

/** @param suites - `{ suite, runs }` records, as render.mjs loads them */
export function channelOverheadMarkdown(suites, headingLevel) {
  const majors = [...new Set(suites.flatMap((s) => s.runs.map((r) => r.runtime.major)))].sort((a, b) => a - b);
  const rows = [];
  for (const suite of suites) {
    const kernels = [];
    for (const run of suite.runs)
      for (const sc of run.scenarios)
        if (sc.id.startsWith(UNUSED) && !kernels.includes(sc.id.slice(UNUSED.length)))
          kernels.push(sc.id.slice(UNUSED.length));
    for (const kernel of kernels) {
      const cells = majors.map((major) => {
        const run = suite.runs.find((r) => r.runtime.major === major);
        const unused = run?.scenarios.find((sc) => sc.id === UNUSED + kernel);
        if (unused === undefined) return '–';
        const bridge = run.scenarios.find((sc) => sc.id === BRIDGE + kernel);
        const mark = unused.met === true ? ' ✓' : unused.met === false ? ' ✗' : '';
        return `${pctText(unused.overheadPct)}${mark} (bridge ${pctText(bridge?.overheadPct)})`;
      });
      const reference = suite.runs
        .map((r) => r.scenarios.find((sc) => sc.id === UNUSED + kernel))
        .filter(Boolean)
        .at(-1);
      const what = reference.title.replace(/^[^:]*:\s*/, '');
      rows.push(`| ${escapeCell(suite.suite)} | ${escapeCell(what)} | ${cells.join(' | ')} |`);
    }
  }
  if (rows.length === 0) return '';
  const hashes = '#'.repeat(headingLevel);
  return [
    `${hashes} Diagnostics channels: what they cost when unused, in instructions`,
    '',
    `| suite | hot path | ${majors.map((major) => runtimeLabel({ runtime: { major } })).join(' | ')} |`,
    `|---|---|${majors.map(() => '---:').join('|')}|`,
    ...rows,
    '',
    "Each cell: how many more instructions per operation the build as shipped executes with no subscriber than the same build with every `hasSubscribers` read compiled out (✓ under the 1% target, ✗ over it), and in brackets how many more again with the OpenTelemetry bridge on (`instrumentTickwheel()` recording into the SDK). Counted by valgrind (cachegrind) as the difference of a long and a short run under `node --predictable --no-concurrent-recompilation`, so the figures do not move with the machine's load: `node benchmarks/lib/channel-overhead.mjs --node all` (or the suites themselves).",
    '',
  ].join('\n');
}

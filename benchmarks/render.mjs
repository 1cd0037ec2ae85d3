/**
 * Turns every results/*.json into what people read:
 *
 * - results/chart.svg: per scenario, how many times better tickwheel is than the baseline, one
 *   bar per Node runtime the suite ran under (log scale, bars grow right of 1× when better,
 *   left when worse), the target as a marker, green when met and red when missed; scenarios
 *   whose target is an absolute figure (bytes, wakeups, ms over the baseline) are shown as
 *   values, one per runtime. Self-contained: no fonts, no scripts.
 * - results/summary.md: one table per suite with every runtime side by side, then each
 *   runtime's full table (every candidate) and the machine it ran on.
 * - the root README.md, only between `<!-- bench:start -->` and `<!-- bench:end -->` (left alone
 *   when the markers are missing): the chart and the same tables.
 *
 *   node render.mjs          # run-all.mjs calls it after the suites
 *
 * Every figure comes from the results files; nothing here is typed by hand.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_DIR, RESULTS_DIR, readResultsFile } from './lib/harness.mjs';

const README = path.join(path.dirname(BENCH_DIR), 'README.md');
const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';
/** Suites listed first in this order; any others follow alphabetically. */
const SUITE_ORDER = ['core', 'grpc', 'ws', 'fetch', 'redis', 'game'];

const COLOR = { met: '#1a7f37', missed: '#cf222e', none: '#57606a', grid: '#d0d7de', text: '#1f2328', muted: '#656d76' };

// ---------------------------------------------------------------------------------------------
// Loading

/** Every results file as `{ suite, runs }`, runs oldest Node major first (see readResultsFile). */
function loadSuites() {
  if (!fs.existsSync(RESULTS_DIR)) return [];
  const suites = [];
  for (const file of fs.readdirSync(RESULTS_DIR).filter((f) => f.endsWith('.json'))) {
    try {
      const record = readResultsFile(path.join(RESULTS_DIR, file));
      if (record.runs.length > 0) suites.push(record);
      else console.warn(`render: ${file} has no runs; skipped`);
    } catch (error) {
      console.warn(`render: cannot read ${file}: ${error.message}; skipped`);
    }
  }
  const rank = (name) => (SUITE_ORDER.includes(name) ? SUITE_ORDER.indexOf(name) : SUITE_ORDER.length);
  return suites.sort((a, b) => rank(a.suite) - rank(b.suite) || a.suite.localeCompare(b.suite));
}

/**
 * The scenarios of a suite across its runs: each id once, in the order of the newest run (then
 * any that only older runs have), with the record of that scenario in each run (or undefined).
 */
function scenarioRows(suite) {
  const newest = newestRun(suite);
  const ids = [];
  for (const run of [newest, ...suite.runs]) for (const sc of run.scenarios) if (!ids.includes(sc.id)) ids.push(sc.id);
  return ids.map((id) => {
    const perRun = suite.runs.map((run) => run.scenarios.find((sc) => sc.id === id));
    const reference = newest.scenarios.find((sc) => sc.id === id) ?? perRun.find(Boolean);
    return { id, reference, perRun };
  });
}

function newestRun(suite) {
  return suite.runs.reduce((a, b) => ((b.date ?? '') > (a.date ?? '') ? b : a));
}

function runtimeLabel(run) {
  return `Node ${run.runtime.major}`;
}

// ---------------------------------------------------------------------------------------------
// Formatting

/** A number for people: 3 significant digits, k/M suffixes for big ones. */
function human(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${trim(value / 1e9)}G`;
  if (abs >= 1e6) return `${trim(value / 1e6)}M`;
  if (abs >= 1e4) return `${trim(value / 1e3)}k`;
  if (abs >= 100) return String(Math.round(value));
  if (abs === 0) return '0';
  return trim(value);
}

function trim(value) {
  return String(Number(value.toPrecision(3)));
}

function withUnit(value, unit) {
  return `${human(value)} ${unit}`;
}

function ratioText(ratio) {
  if (ratio === null || ratio === undefined) return '–';
  return `${ratio >= 10 ? ratio.toFixed(0) : ratio >= 1 ? ratio.toFixed(2) : ratio.toPrecision(2)}×`;
}

function targetText(sc) {
  const t = sc.target;
  if (!t) return '–';
  if (t.ratio !== undefined) return `≥ ${t.ratio}×`;
  if (t.max === 0) return `0 ${sc.unit}`;
  if (t.max !== undefined) return `≤ ${human(t.max)} ${sc.unit}`;
  if (t.maxOver !== undefined) return `≤ ${sc.baseline ?? 'baseline'} + ${human(t.maxOver)} ${sc.unit}`;
  return '–';
}

function metText(sc) {
  if (sc.met === null || sc.met === undefined) return '–';
  return sc.met ? 'met' : '**MISSED**';
}

function medianOf(sc, name) {
  return name ? sc.results?.[name]?.median : undefined;
}

/** The machine a suite ran on; with `withLoad`, also the load average when it finished. */
function machineLine(record, withLoad = true) {
  const m = record.machine ?? {};
  const load = withLoad ? `, ${loadLine(record)}` : '';
  return `${m.cpu ?? 'unknown CPU'}, ${m.cores ?? '?'} cores, ${m.memoryGiB ?? '?'} GiB, ${m.os ?? '?'}, Node ${m.node ?? '?'}${load}`;
}

function loadLine(record) {
  const load = record.machine?.loadAverage;
  return Array.isArray(load) ? `load average ${load.join(' / ')}` : 'load average unknown';
}

function escapeXml(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function escapeCell(text) {
  return String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

// ---------------------------------------------------------------------------------------------
// Markdown

/** The headline figure of a scenario in one run: its ratio when it has a bar, else its value. */
function headline(sc) {
  return isBarRow(sc) ? ratioText(sc.ratio) : withUnit(medianOf(sc, sc.subject), sc.unit);
}

function metMark(sc) {
  return sc.met === true ? ' ✓' : sc.met === false ? ' ✗' : '';
}

/** How many times the floor's cost (a bare linked list, lib/floor-list.mjs) tickwheel pays. */
function floorText(sc) {
  return typeof sc.costOverFloor === 'number' ? `${trim(sc.costOverFloor)}× floor` : '';
}

/** One table per suite with a column per runtime, then each runtime's full table folded away. */
function suiteTable(suite, headingLevel) {
  const hashes = '#'.repeat(headingLevel);
  const runs = suite.runs;
  const lines = [`${hashes} ${suite.suite}`, ''];
  lines.push(`| scenario | vs | target | ${runs.map(runtimeLabel).join(' | ')} |`);
  lines.push(`|---|---|---|${runs.map(() => '---:').join('|')}|`);
  for (const { reference, perRun } of scenarioRows(suite)) {
    const cells = perRun.map((sc) => (sc ? `${headline(sc)}${metMark(sc)}${floorText(sc) ? ` (${floorText(sc)})` : ''}` : '–'));
    lines.push(`| ${escapeCell(reference.title ?? reference.id)} | ${escapeCell(reference.baseline ?? '–')} | ${escapeCell(targetText(reference))} | ${cells.map(escapeCell).join(' | ')} |`);
  }
  lines.push('');
  const counts = runs.map((run) => {
    const met = run.scenarios.filter((sc) => sc.met === true).length;
    const judged = run.scenarios.filter((sc) => sc.met !== null && sc.met !== undefined).length;
    return `${runtimeLabel(run)} ${met} of ${judged}`;
  });
  lines.push(`Targets met (✓ met, ✗ missed): ${counts.join(', ')}. A ratio is how many times better tickwheel is than the "vs" candidate; other cells are tickwheel's own figure. "n× floor": tickwheel costs n times what a bare intrusive linked list costs in the same run (lib/floor-list.mjs).`);
  lines.push('');
  for (const run of runs) {
    lines.push(`<details><summary>${runtimeLabel(run)} (${run.runtime.node}): every candidate</summary>`);
    lines.push('');
    lines.push(...runTable(run));
    lines.push('</details>');
    lines.push('');
  }
  const notes = scenarioRows(suite).map((row) => row.reference).filter((sc) => sc.note);
  if (notes.length > 0) {
    lines.push('<details><summary>How each scenario is measured</summary>');
    lines.push('');
    for (const sc of notes) lines.push(`- **${escapeCell(sc.title ?? sc.id)}**: ${sc.note}`);
    lines.push('');
    lines.push('</details>');
    lines.push('');
  }
  return lines.join('\n');
}

/** Every candidate's median in one run, with the run's machine line. */
function runTable(run) {
  const lines = ['| scenario | tickwheel | baseline | ratio | target | result | cost vs floor | others |', '|---|---:|---:|---:|---|---|---:|---|'];
  for (const sc of run.scenarios) {
    const subject = medianOf(sc, sc.subject);
    const baseline = medianOf(sc, sc.baseline);
    const others = Object.entries(sc.results ?? {})
      .filter(([name]) => name !== sc.subject && name !== sc.baseline)
      .map(([name, r]) => `${name} ${withUnit(r.median, sc.unit)}`)
      .join(', ');
    lines.push(
      `| ${escapeCell(sc.title ?? sc.id)} | ${sc.subject === 'tickwheel' ? '' : `${escapeCell(sc.subject)}: `}${withUnit(subject, sc.unit)} | ${sc.baseline ? `${escapeCell(sc.baseline)}: ${withUnit(baseline, sc.unit)}` : '–'} | ${ratioText(sc.ratio)} | ${escapeCell(targetText(sc))} | ${metText(sc)} | ${floorText(sc) || '–'} | ${escapeCell(others || '–')} |`,
    );
  }
  lines.push('');
  lines.push(`Medians of ${run.repeats ?? '?'} alternating rounds, \`${run.command ?? `npm run bench -- ${run.suite}`}\` under ${run.runtime.node}, ${run.date ?? 'undated'}.`);
  lines.push(`Machine: ${machineLine(run)}.`);
  lines.push('');
  return lines;
}

function summaryMarkdown(suites, headingLevel) {
  if (suites.length === 0) return 'No results yet: run `npm run bench`.\n';
  return suites.map((suite) => suiteTable(suite, headingLevel)).join('\n');
}

// ---------------------------------------------------------------------------------------------
// SVG chart

const W = 1160;
const LABEL_W = 330;
const PLOT_X = LABEL_W + 10;
const PLOT_W = 380;
const NOTE_X = PLOT_X + PLOT_W + 16;
const ROW_H = 28;
const BAR_H = 14;
const FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif";

/** Splits a label into lines of at most `max` characters (about LABEL_W at 13 px), at spaces. */
function wrap(text, max = 44) {
  const lines = [];
  let line = '';
  for (const word of String(text).split(' ')) {
    if (line && line.length + 1 + word.length > max) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

function isBarRow(sc) {
  if (sc.ratio === null || sc.ratio === undefined || !(sc.ratio > 0)) return false;
  if (sc.target && (sc.target.max !== undefined || sc.target.maxOver !== undefined)) return false;
  const s = medianOf(sc, sc.subject);
  const b = medianOf(sc, sc.baseline);
  return s > 0 && b > 0;
}

function isValueRow(sc) {
  return !isBarRow(sc) && sc.target !== null && sc.target !== undefined;
}

/** Height of one runtime's line within a scenario row. */
const RUN_H = 18;

function chartSvg(suites) {
  const rows = [];
  for (const suite of suites) {
    const shown = [];
    for (const { reference, perRun } of scenarioRows(suite)) {
      const runs = perRun
        .map((sc, i) => ({ sc, run: suite.runs[i] }))
        .filter(({ sc }) => sc && (isBarRow(sc) || isValueRow(sc)));
      if (runs.length > 0) shown.push({ reference, runs });
    }
    if (shown.length === 0) continue;
    rows.push({ kind: 'suite', suite, height: ROW_H });
    for (const { reference, runs } of shown) {
      const lines = wrap(reference.title ?? reference.id);
      const height = Math.max(ROW_H + (lines.length - 1) * 15, runs.length * RUN_H + 10);
      rows.push({ kind: 'scenario', reference, runs, lines, height });
    }
  }
  let offset = 0;
  for (const row of rows) {
    row.y = offset;
    offset += row.height;
  }
  const rowsHeight = offset;

  // Log-scale domain: whole decades around every ratio and ratio target, always including 1×.
  const values = [1];
  for (const row of rows) {
    if (row.kind !== 'scenario') continue;
    for (const { sc } of row.runs) {
      if (!isBarRow(sc)) continue;
      values.push(sc.ratio);
      if (sc.target?.ratio !== undefined) values.push(sc.target.ratio);
    }
  }
  const lo = Math.min(0.1, 10 ** Math.floor(Math.log10(Math.min(...values))));
  const hi = Math.max(10, 10 ** Math.ceil(Math.log10(Math.max(...values) * 1.05)));
  const x = (ratio) => PLOT_X + ((Math.log10(ratio) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * PLOT_W;

  const top = 78;
  const allRuns = suites.flatMap((suite) => suite.runs);
  const machines = [...new Set(allRuns.map((run) => machineLine(run, false).replace(/, Node [^,]*$/, '')))];
  const height = top + rowsHeight + 24 + 16 * (allRuns.length + machines.length) + 12;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" xml:space="preserve" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="${FONT}" font-size="13" fill="${COLOR.text}">`);
  out.push(`<title>tickwheel benchmarks: times better than the baseline, per Node runtime</title>`);
  out.push(`<rect width="${W}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="16" y="28" font-size="18" font-weight="600">tickwheel vs. the alternatives — × better than baseline (log scale), per Node runtime</text>`);
  out.push(
    `<text x="16" y="48" font-size="12" fill="${COLOR.muted}">One bar per Node runtime; right of 1× is better. ◆ = target. <tspan fill="${COLOR.met}">■ target met</tspan>   <tspan fill="${COLOR.missed}">■ target missed</tspan>   <tspan fill="${COLOR.none}">■ no target</tspan></text>`,
  );

  // Decade grid and axis labels.
  const gridBottom = top + rowsHeight;
  for (let d = Math.log10(lo); d <= Math.log10(hi) + 1e-9; d++) {
    const value = 10 ** d;
    const gx = x(value).toFixed(1);
    const isOne = Math.abs(d) < 1e-9;
    out.push(`<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${gridBottom}" stroke="${isOne ? '#8c959f' : COLOR.grid}" stroke-width="${isOne ? 1.5 : 1}"/>`);
    out.push(`<text x="${gx}" y="${top - 10}" font-size="11" text-anchor="middle" fill="${COLOR.muted}">${value >= 1 ? value : value.toPrecision(1)}×</text>`);
  }

  for (const row of rows) {
    const y = top + row.y;
    const mid = y + row.height / 2;
    if (row.kind === 'suite') {
      out.push(`<text x="16" y="${mid + 5}" font-size="14" font-weight="600">${escapeXml(row.suite.suite)}</text>`);
      out.push(`<line x1="16" y1="${y + row.height - 3}" x2="${LABEL_W}" y2="${y + row.height - 3}" stroke="${COLOR.grid}"/>`);
      continue;
    }
    const firstLine = mid + 4 - ((row.lines.length - 1) * 15) / 2;
    out.push(`<text x="28" y="${firstLine}">${row.lines.map((line, i) => `<tspan x="28" dy="${i === 0 ? 0 : 15}">${escapeXml(line)}</tspan>`).join('')}</text>`);
    const hasValues = row.runs.some(({ sc }) => !isBarRow(sc));
    if (hasValues) {
      // A white band hides the grid behind value lines: they have no position on the scale.
      out.push(`<rect x="${PLOT_X - 4}" y="${y + 3}" width="${PLOT_W + 8}" height="${row.height - 6}" fill="#ffffff"/>`);
    }
    row.runs.forEach(({ sc, run }, i) => {
      const lineMid = mid + (i - (row.runs.length - 1) / 2) * RUN_H;
      const color = sc.met === true ? COLOR.met : sc.met === false ? COLOR.missed : COLOR.none;
      const label = runtimeLabel(run);
      if (isBarRow(sc)) {
        const x1 = x(1);
        const x2 = x(sc.ratio);
        const left = Math.min(x1, x2);
        const width = Math.max(1.5, Math.abs(x2 - x1));
        out.push(`<rect x="${left.toFixed(1)}" y="${(lineMid - BAR_H / 2).toFixed(1)}" width="${width.toFixed(1)}" height="${BAR_H}" rx="2" fill="${color}"/>`);
        if (sc.target?.ratio !== undefined) {
          const tx = x(sc.target.ratio);
          out.push(`<path d="M ${tx.toFixed(1)} ${lineMid - 8} l 4 8 l -4 8 l -4 -8 z" fill="#ffffff" stroke="${COLOR.text}" stroke-width="1.5"/>`);
        }
        const target = sc.target?.ratio !== undefined ? ` (target ${targetText(sc)})` : '';
        out.push(
          `<text x="${NOTE_X}" y="${lineMid + 4}"><tspan fill="${COLOR.muted}">${escapeXml(label)}: </tspan><tspan font-weight="600" fill="${color}">${escapeXml(ratioText(sc.ratio))}</tspan><tspan fill="${COLOR.muted}"> vs ${escapeXml(sc.baseline)}${escapeXml(target)}</tspan></text>`,
        );
      } else {
        const subject = medianOf(sc, sc.subject);
        const baseline = medianOf(sc, sc.baseline);
        const versus = baseline !== undefined ? ` vs ${sc.baseline} ${withUnit(baseline, sc.unit)}` : '';
        out.push(
          `<text x="${PLOT_X}" y="${lineMid + 4}"><tspan fill="${COLOR.muted}">${escapeXml(label)}: </tspan><tspan font-weight="600" fill="${color}">${escapeXml(withUnit(subject, sc.unit))}</tspan><tspan fill="${COLOR.muted}">${escapeXml(versus)}</tspan></text>`,
        );
        out.push(`<text x="${NOTE_X}" y="${lineMid + 4}"><tspan fill="${COLOR.muted}">target ${escapeXml(targetText(sc))}</tspan><tspan font-weight="600" fill="${color}"> ${sc.met === true ? '✓ met' : sc.met === false ? '✗ missed' : ''}</tspan></text>`);
      }
    });
  }

  // Footer: where and when each suite ran, per runtime.
  let fy = gridBottom + 28;
  out.push(`<line x1="16" y1="${fy - 14}" x2="${W - 16}" y2="${fy - 14}" stroke="${COLOR.grid}"/>`);
  for (const machine of machines) {
    out.push(`<text x="16" y="${fy}" font-size="11" fill="${COLOR.muted}">${escapeXml(`Machine: ${machine}`)}</text>`);
    fy += 16;
  }
  for (const suite of suites) {
    for (const run of suite.runs) {
      out.push(
        `<text x="16" y="${fy}" font-size="11" fill="${COLOR.muted}">${escapeXml(`${suite.suite}, ${run.runtime.node}: ${run.date ?? 'undated'} · medians of ${run.repeats ?? '?'} alternating rounds · ${run.command ?? ''} · ${loadLine(run)}`)}</text>`,
      );
      fy += 16;
    }
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------

function updateReadme(body) {
  if (!fs.existsSync(README)) return false;
  const text = fs.readFileSync(README, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < 0 || end < start) return false;
  const replaced = `${text.slice(0, start + START.length)}\n${body.trim()}\n${text.slice(end)}`;
  if (replaced !== text) fs.writeFileSync(README, replaced);
  return true;
}

const suites = loadSuites();
fs.mkdirSync(RESULTS_DIR, { recursive: true });
fs.writeFileSync(path.join(RESULTS_DIR, 'chart.svg'), chartSvg(suites));
fs.writeFileSync(
  path.join(RESULTS_DIR, 'summary.md'),
  `# Benchmark results\n\nGenerated by \`benchmarks/render.mjs\` from \`benchmarks/results/*.json\`; see [the benchmarks README](../README.md) for how to run and read them.\n\n![benchmark chart](chart.svg)\n\n${summaryMarkdown(suites, 2)}`,
);
const readmeBody = [
  'Measured by `npm run bench` (see [benchmarks/](benchmarks/README.md)); regenerated from the results files, never typed by hand.',
  '',
  '![tickwheel benchmark chart](benchmarks/results/chart.svg)',
  '',
  summaryMarkdown(suites, 3),
].join('\n');
const readmeUpdated = updateReadme(readmeBody);
console.log(`render: ${suites.length} suite(s) → results/chart.svg, results/summary.md${readmeUpdated ? ', README.md' : ' (README markers absent: README left alone)'}`);

/**
 * results/chart.svg: per scenario, one bar per Node runtime of how many times better tickwheel is
 * than the baseline (log scale), the target as a marker, green when met and red when missed;
 * scenarios with an absolute target as values. Self-contained: no fonts, no scripts.
 */
import {
  escapeXml,
  isBarRow,
  isValueRow,
  loadLine,
  machineLine,
  medianOf,
  ratioText,
  runtimeLabel,
  scenarioRows,
  targetText,
  withUnit,
} from './render-format.mjs';

const COLOR = {
  met: '#1a7f37',
  missed: '#cf222e',
  none: '#57606a',
  grid: '#d0d7de',
  text: '#1f2328',
  muted: '#656d76',
};

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

/** Height of one runtime's line within a scenario row. */
const RUN_H = 18;

export function chartSvg(suites) {
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
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" xml:space="preserve" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="${FONT}" font-size="13" fill="${COLOR.text}">`,
  );
  out.push(`<title>tickwheel benchmarks: times better than the baseline, per Node runtime</title>`);
  out.push(`<rect width="${W}" height="${height}" fill="#ffffff"/>`);
  out.push(
    `<text x="16" y="28" font-size="18" font-weight="600">tickwheel vs. the alternatives — × better than baseline (log scale), per Node runtime</text>`,
  );
  out.push(
    `<text x="16" y="48" font-size="12" fill="${COLOR.muted}">One bar per Node runtime; right of 1× is better. ◆ = target. <tspan fill="${COLOR.met}">■ target met</tspan>   <tspan fill="${COLOR.missed}">■ target missed</tspan>   <tspan fill="${COLOR.none}">■ no target</tspan></text>`,
  );

  // Decade grid and axis labels.
  const gridBottom = top + rowsHeight;
  for (let d = Math.log10(lo); d <= Math.log10(hi) + 1e-9; d++) {
    const value = 10 ** d;
    const gx = x(value).toFixed(1);
    const isOne = Math.abs(d) < 1e-9;
    out.push(
      `<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${gridBottom}" stroke="${isOne ? '#8c959f' : COLOR.grid}" stroke-width="${isOne ? 1.5 : 1}"/>`,
    );
    out.push(
      `<text x="${gx}" y="${top - 10}" font-size="11" text-anchor="middle" fill="${COLOR.muted}">${value >= 1 ? value : value.toPrecision(1)}×</text>`,
    );
  }

  for (const row of rows) {
    const y = top + row.y;
    const mid = y + row.height / 2;
    if (row.kind === 'suite') {
      out.push(`<text x="16" y="${mid + 5}" font-size="14" font-weight="600">${escapeXml(row.suite.suite)}</text>`);
      out.push(
        `<line x1="16" y1="${y + row.height - 3}" x2="${LABEL_W}" y2="${y + row.height - 3}" stroke="${COLOR.grid}"/>`,
      );
      continue;
    }
    const firstLine = mid + 4 - ((row.lines.length - 1) * 15) / 2;
    out.push(
      `<text x="28" y="${firstLine}">${row.lines.map((line, i) => `<tspan x="28" dy="${i === 0 ? 0 : 15}">${escapeXml(line)}</tspan>`).join('')}</text>`,
    );
    const hasValues = row.runs.some(({ sc }) => !isBarRow(sc));
    if (hasValues) {
      // A white band hides the grid behind value lines: they have no position on the scale.
      out.push(
        `<rect x="${PLOT_X - 4}" y="${y + 3}" width="${PLOT_W + 8}" height="${row.height - 6}" fill="#ffffff"/>`,
      );
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
        out.push(
          `<rect x="${left.toFixed(1)}" y="${(lineMid - BAR_H / 2).toFixed(1)}" width="${width.toFixed(1)}" height="${BAR_H}" rx="2" fill="${color}"/>`,
        );
        if (sc.target?.ratio !== undefined) {
          const tx = x(sc.target.ratio);
          out.push(
            `<path d="M ${tx.toFixed(1)} ${lineMid - 8} l 4 8 l -4 8 l -4 -8 z" fill="#ffffff" stroke="${COLOR.text}" stroke-width="1.5"/>`,
          );
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
        out.push(
          `<text x="${NOTE_X}" y="${lineMid + 4}"><tspan fill="${COLOR.muted}">target ${escapeXml(targetText(sc))}</tspan><tspan font-weight="600" fill="${color}"> ${sc.met === true ? '✓ met' : sc.met === false ? '✗ missed' : ''}</tspan></text>`,
        );
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

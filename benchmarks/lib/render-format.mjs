/**
 * Formatting shared by the tables (render-tables.mjs) and the chart (render-chart.mjs): figures
 * for people, targets, machine lines, and the scenarios of a suite across its runtimes.
 */
/**
 * The scenarios of a suite across its runs: each id once, in the order of the newest run (then
 * any that only older runs have), with the record of that scenario in each run (or undefined).
 */
export function scenarioRows(suite) {
  const newest = newestRun(suite);
  const ids = [];
  for (const run of [newest, ...suite.runs]) for (const sc of run.scenarios) if (!ids.includes(sc.id)) ids.push(sc.id);
  return ids.map((id) => {
    const perRun = suite.runs.map((run) => run.scenarios.find((sc) => sc.id === id));
    const reference = newest.scenarios.find((sc) => sc.id === id) ?? perRun.find(Boolean);
    return { id, reference, perRun };
  });
}

export function newestRun(suite) {
  return suite.runs.reduce((a, b) => ((b.date ?? '') > (a.date ?? '') ? b : a));
}

export function runtimeLabel(run) {
  return `Node ${run.runtime.major}`;
}

// ---------------------------------------------------------------------------------------------
// Formatting

/** A number for people: 3 significant digits, k/M suffixes for big ones. */
export function human(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${trim(value / 1e9)}G`;
  if (abs >= 1e6) return `${trim(value / 1e6)}M`;
  if (abs >= 1e4) return `${trim(value / 1e3)}k`;
  if (abs >= 100) return String(Math.round(value));
  if (abs === 0) return '0';
  return trim(value);
}

export function trim(value) {
  return String(Number(value.toPrecision(3)));
}

export function withUnit(value, unit) {
  return `${human(value)} ${unit}`;
}

export function ratioText(ratio) {
  if (ratio === null || ratio === undefined) return '–';
  return `${ratio >= 10 ? ratio.toFixed(0) : ratio >= 1 ? ratio.toFixed(2) : ratio.toPrecision(2)}×`;
}

export function targetText(sc) {
  const t = sc.target;
  if (!t) return '–';
  // Three significant digits: a target given as 1 / 0.55 reads 1.82, not 1.8181818181818181.
  if (t.ratio !== undefined) return `≥ ${Number(t.ratio.toPrecision(3))}×`;
  if (t.max === 0) return `0 ${sc.unit}`;
  if (t.max !== undefined) return `≤ ${human(t.max)} ${sc.unit}`;
  if (t.maxOver !== undefined) return `≤ ${sc.baseline ?? 'baseline'} + ${human(t.maxOver)} ${sc.unit}`;
  if (t.maxOverFloor !== undefined) return `≤ ${t.maxOverFloor}× floor`;
  return '–';
}

export function metText(sc) {
  if (sc.met === null || sc.met === undefined) return '–';
  return sc.met ? 'met' : '**MISSED**';
}

export function medianOf(sc, name) {
  return name ? sc.results?.[name]?.median : undefined;
}

/** The machine a suite ran on; with `withLoad`, also the load average when it finished. */
export function machineLine(record, withLoad = true) {
  const m = record.machine ?? {};
  const load = withLoad ? `, ${loadLine(record)}` : '';
  return `${m.cpu ?? 'unknown CPU'}, ${m.cores ?? '?'} cores, ${m.memoryGiB ?? '?'} GiB, ${m.os ?? '?'}, Node ${m.node ?? '?'}${load}`;
}

export function loadLine(record) {
  const load = record.machine?.loadAverage;
  return Array.isArray(load) ? `load average ${load.join(' / ')}` : 'load average unknown';
}

export function escapeXml(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function escapeCell(text) {
  return String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Whether a scenario has a bar on the chart: a positive ratio and no absolute target. */
export function isBarRow(sc) {
  if (sc.ratio === null || sc.ratio === undefined || !(sc.ratio > 0)) return false;
  if (sc.target && (sc.target.max !== undefined || sc.target.maxOver !== undefined)) return false;
  const s = medianOf(sc, sc.subject);
  const b = medianOf(sc, sc.baseline);
  return s > 0 && b > 0;
}

export function isValueRow(sc) {
  return !isBarRow(sc) && sc.target !== null && sc.target !== undefined;
}

/**
 * The Markdown tables of results/summary.md and the README: per suite, every runtime side by
 * side, then each runtime's full table (every candidate) and machine line.
 */
import {
  escapeCell,
  isBarRow,
  machineLine,
  medianOf,
  metText,
  ratioText,
  runtimeLabel,
  scenarioRows,
  targetText,
  trim,
  withUnit,
} from './render-format.mjs';

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
    const cells = perRun.map((sc) =>
      sc ? `${headline(sc)}${metMark(sc)}${floorText(sc) ? ` (${floorText(sc)})` : ''}` : '–',
    );
    lines.push(
      `| ${escapeCell(reference.title ?? reference.id)} | ${escapeCell(reference.baseline ?? '–')} | ${escapeCell(targetText(reference))} | ${cells.map(escapeCell).join(' | ')} |`,
    );
  }
  lines.push('');
  const counts = runs.map((run) => {
    const met = run.scenarios.filter((sc) => sc.met === true).length;
    const judged = run.scenarios.filter((sc) => sc.met !== null && sc.met !== undefined).length;
    return `${runtimeLabel(run)} ${met} of ${judged}`;
  });
  lines.push(
    `Targets met (✓ met, ✗ missed): ${counts.join(', ')}. A ratio is how many times better tickwheel is than the "vs" candidate; other cells are tickwheel's own figure. "n× floor": tickwheel costs n times what a bare intrusive linked list costs in the same run (lib/floor-list.mjs).`,
  );
  lines.push('');
  for (const run of runs) {
    lines.push(`<details><summary>${runtimeLabel(run)} (${run.runtime.node}): every candidate</summary>`);
    lines.push('');
    lines.push(...runTable(run));
    lines.push('</details>');
    lines.push('');
  }
  const notes = scenarioRows(suite)
    .map((row) => row.reference)
    .filter((sc) => sc.note);
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
  const lines = [
    '| scenario | tickwheel | baseline | ratio | target | result | cost vs floor | others |',
    '|---|---:|---:|---:|---|---|---:|---|',
  ];
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
  lines.push(
    `Medians of ${run.repeats ?? '?'} alternating rounds, \`${run.command ?? `npm run bench -- ${run.suite}`}\` under ${run.runtime.node}, ${run.date ?? 'undated'}.`,
  );
  lines.push(`Machine: ${machineLine(run)}.`);
  lines.push('');
  return lines;
}

export function summaryMarkdown(suites, headingLevel) {
  if (suites.length === 0) return 'No results yet: run `npm run bench`.\n';
  return suites.map((suite) => suiteTable(suite, headingLevel)).join('\n');
}

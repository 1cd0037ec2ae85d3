import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds per test file in the last measured run, written by `node scripts/slowest-tests.mjs --write`. */
const DURATIONS = path.resolve(import.meta.dirname, '../tests/file-durations.json');

/**
 * Runs the whole suite's files slowest first, across projects, so that with several workers the
 * longest files start at once instead of last (vitest's own order runs project after project, and
 * knows durations only from a cache a fresh clone does not have). A file not in the list yet runs
 * with the median file's weight.
 */
export default class SlowestFirstSequencer extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations: Record<string, number> = fs.existsSync(DURATIONS)
      ? (JSON.parse(fs.readFileSync(DURATIONS, 'utf8')) as Record<string, number>)
      : {};
    const known = Object.values(durations).sort((a, b) => a - b);
    const median = known[Math.floor(known.length / 2)] ?? 0;
    const root = path.dirname(path.dirname(DURATIONS));
    const weight = (spec: TestSpecification): number =>
      durations[path.relative(root, spec.moduleId).split(path.sep).join('/')] ?? median;
    const sorted = [...files].sort(
      (a, b) => a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder || weight(b) - weight(a),
    );
    return Promise.resolve(sorted);
  }
}

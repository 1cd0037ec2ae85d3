import { defineConfig } from 'vitest/config';
import SlowestFirstSequencer from './scripts/slowest-first-sequencer.mjs';

// One root config; each package, each example and the consumer tests are projects with their own vitest.config.mts.
export default defineConfig({
  test: {
    projects: ['packages/*/vitest.config.mts', 'examples/*/vitest.config.mts', 'tests/*/vitest.config.mts'],
    reporters: ['default', './scripts/plain-summary-reporter.mts'],
    // Most of the suite's time is real time waited on (servers, browsers, child processes), not CPU:
    // more workers than cores overlap those waits (vitest's default is one fewer than the cores).
    maxWorkers: 4,
    sequence: { sequencer: SlowestFirstSequencer },
  },
});

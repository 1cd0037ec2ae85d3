import { defineConfig } from 'vitest/config';

// One root config; each package, each example and the consumer tests are projects with their own vitest.config.mts.
export default defineConfig({
  test: {
    projects: ['packages/*/vitest.config.mts', 'examples/*/vitest.config.mts', 'tests/*/vitest.config.mts'],
    reporters: ['default', './scripts/plain-summary-reporter.mts'],
  },
});

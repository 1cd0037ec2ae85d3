import { defineConfig } from 'vitest/config';

// One root config; each package (and each example) is a project with its own vitest.config.mts.
export default defineConfig({
  test: {
    projects: ['packages/*/vitest.config.mts', 'examples/*/vitest.config.mts'],
    reporters: ['default', './scripts/plain-summary-reporter.mts'],
  },
});

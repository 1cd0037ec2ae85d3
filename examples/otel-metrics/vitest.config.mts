import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'example-otel-metrics',
    include: ['test/**/*.test.mjs'],
    testTimeout: 30_000,
  },
});

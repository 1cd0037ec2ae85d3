import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'example-fetch-timeouts',
    include: ['test/**/*.test.mjs'],
    testTimeout: 30_000,
  },
});

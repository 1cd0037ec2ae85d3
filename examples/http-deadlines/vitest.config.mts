import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'example-http-deadlines',
    include: ['test/**/*.test.mjs'],
    testTimeout: 30_000,
  },
});
